#!/usr/bin/env bash
# The main job: the demo privacy release run by Airflow 3 on the embedded defaults —
# generated census data, SQLite for Airflow's metadata (release_output/airflow), the
# published table in a local DuckDB file (release_output/release.duckdb). No scheduler,
# no webserver: `airflow dags test` runs the DAG in-process. Then the published table is
# re-measured against the spec and the locations are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${EXTRAS:-all,test}" bash scripts/bootstrap.sh
OUT="$PWD/release_output"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$OUT/airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="$PWD/dags"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
mkdir -p "$AIRFLOW_HOME"
LOG="$AIRFLOW_HOME/privacy_release.log"
echo "airflow: preparing the SQLite metadata database in $AIRFLOW_HOME" >&2
.venv/bin/airflow db migrate > "$AIRFLOW_HOME/db_migrate.log" 2>&1
echo "airflow: running DAG privacy_release (load → diagnose → anonymize → check → publish); log: $LOG" >&2
.venv/bin/airflow dags test privacy_release > "$LOG" 2>&1 || true
if ! grep -q "DagRun Finished: dag_id=privacy_release.*state=success" "$LOG"; then
  echo "privacy_release did not succeed; nothing new was published. Last lines of $LOG:" >&2
  tail -n 25 "$LOG" >&2
  exit 1
fi
echo "airflow: privacy_release succeeded" >&2
.venv/bin/privacy-plugins published specs/demo_census.yaml
echo "  Airflow metadata  $AIRFLOW_HOME/airflow.db (SQLite)"
