"""Generalization hierarchies: the value object, ARX CSV IO and builders."""

from privacy_plugins.core.hierarchies.builders import (
    date_hierarchy,
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    taxonomy_hierarchy,
)
from privacy_plugins.core.hierarchies.config import (
    DATA_FREE_BUILDERS,
    HIERARCHY_BUILDERS,
    HierarchyConfig,
    build_hierarchy,
    builder_of,
    check_config_shape,
)
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy, as_labels
from privacy_plugins.core.hierarchies.io import hierarchy_files, load_hierarchies, read_hierarchy, write_hierarchy

__all__ = [
    "DATA_FREE_BUILDERS",
    "HIERARCHY_BUILDERS",
    "Hierarchy",
    "HierarchyConfig",
    "as_labels",
    "build_hierarchy",
    "builder_of",
    "check_config_shape",
    "date_hierarchy",
    "grouping_hierarchy",
    "hierarchy_files",
    "interval_hierarchy",
    "load_hierarchies",
    "masking_hierarchy",
    "read_hierarchy",
    "taxonomy_hierarchy",
    "write_hierarchy",
]
