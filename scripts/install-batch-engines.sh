#!/usr/bin/env bash
# Install the engines of the tested batch recipes (examples/batch/, tests/test_batch_engines.py):
# pyspark (needs a Java 17+ runtime: Debian's openjdk-17-jre-headless) and Ray, with pandas and
# pyarrow, into the current Python environment.  Without them those tests skip, naming the package.
#
# CI installs Ray only (.ci/run): measured on the 2-core machine (2026-11-26), pyspark took 119 s
# to install (491 MB), Ray 27 s (240 MB), and the Spark test alone 85-145 s per backend run; see
# docs/batch.md ("Spark", "Ray").
#
# Usage: scripts/install-batch-engines.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v java >/dev/null 2>&1; then
  apt-get install -y openjdk-17-jre-headless || { apt-get update && apt-get install -y openjdk-17-jre-headless; }
fi
python3 -m pip install pandas 'pyarrow>=12' pyspark ray
python3 - <<'PY'
import pyspark, ray
print(f"install-batch-engines: pyspark {pyspark.__version__}, ray {ray.__version__}")
PY
