"""Table names as users write them: ``table``, ``schema.table``, a part in double quotes.

A population table (a GX expectation's ``population``, a release's ``population.table``) may
live in another schema of the batch's database: ``myschema.census_counts``. Each part is
quoted on its own by the database's identifier preparer (``"myschema"."census_counts"`` where
quoting is needed), never the whole name as one identifier. A part written in double quotes
keeps its dots and case (``"my.schema".counts``; ``""`` is a quote inside one). Anything else
(an empty part, an unclosed quote, three parts) is refused with one line naming the setting.
"""

from __future__ import annotations

from typing import Any

from privacy_plugins.errors import ConfigurationError

__all__ = ["named_table", "split_table_name"]


def split_table_name(name: str, *, setting: str = "table") -> tuple[str | None, str]:
    """``(schema, table)`` of ``name`` (``schema`` is ``None`` for a bare name).

    Raises:
        ConfigurationError: an empty part, an unclosed double quote, text after a closing quote
            other than a dot, or more than two parts.

    Example:
        >>> split_table_name("census"), split_table_name("myschema.census_counts")
        ((None, 'census'), ('myschema', 'census_counts'))
        >>> split_table_name('"my.schema"."Counts"'), split_table_name('"x""y".t')
        (('my.schema', 'Counts'), ('x"y', 't'))
    """
    parts: list[str] = []
    current: list[str] = []
    position, quoted_part = 0, False
    while position < len(name):  # (a name is a few characters: read them one by one)
        char = name[position]
        if char == '"' and not current and not quoted_part:
            end = position + 1
            while True:
                end = name.find('"', end)
                if end < 0:
                    raise ConfigurationError(f"{setting} {name!r} has an unclosed double quote")
                if name[end + 1 : end + 2] == '"':
                    end += 2
                    continue
                break
            current.append(name[position + 1 : end].replace('""', '"'))
            quoted_part, position = True, end + 1
            continue
        if char == ".":
            parts.append("".join(current))
            current, quoted_part = [], False
        elif quoted_part or char == '"':
            raise ConfigurationError(
                f'{setting} {name!r}: double quotes must enclose a whole part, as in "my.schema".table'
            )
        else:
            current.append(char)
        position += 1
    parts.append("".join(current))
    if any(not part for part in parts) or len(parts) > 2:
        raise ConfigurationError(
            f"{setting} {name!r} must be 'table' or 'schema.table' (quote a part holding a dot: \"my.schema\".table)"
        )
    return (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])


def named_table(connection: Any, name: str, *, setting: str = "table") -> Any:
    """The table ``name`` (``table`` or ``schema.table``) as a selectable, its columns read by ``LIMIT 0``.

    A bare name is the plain table clause every engine table uses; a schema-qualified one is
    selected ``FROM "schema"."table"``, each part quoted by the dialect's ``quote`` (not its
    ``quote_schema``: ``duckdb_engine`` would split a quoted schema holding a dot).

    Raises:
        ConfigurationError: a malformed name (:func:`split_table_name`).
        sqlalchemy.exc.DBAPIError: no such table (the caller names the setting).
    """
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import lightweight_table

    schema, table = split_table_name(name, setting=setting)
    if schema is None:
        return lightweight_table(connection, table)
    quote = connection.dialect.identifier_preparer.quote
    source = sa.text(f"{quote(schema)}.{quote(table)}")
    names = [str(n) for n in connection.execute(sa.select(sa.text("*")).select_from(source).limit(0)).keys()]
    return sa.select(*[sa.column(n) for n in names]).select_from(source).subquery("pp_named_table")
