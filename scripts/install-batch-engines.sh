#!/usr/bin/env bash
# Install the engines of the tested batch recipes (examples/batch/, tests/batch/test_spark_and_ray.py):
# pyspark (needs a Java 17+ runtime: Debian's openjdk-17-jre-headless) and Ray, with pandas and
# pyarrow, into the current Python environment.  Without them those tests skip, naming the package.
#
# CI installs them too (.ci/run).  Measured on the 2-core machine (2026-11-26, load 3-7): pyspark
# 4.3.0 took 86 s to install without pip's cache (a 456 MB sdist built into a wheel; 491 MB
# installed; 10 s from the cache), Ray 27 s (240 MB); openjdk-17-jre-headless with its libraries
# is 23 Debian packages, 51 MB.  The Spark test takes 23-41 s per backend run; see docs/batch.md
# ("Spark", "Ray").
#
# Usage: scripts/install-batch-engines.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    java_pkg=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openjdk-17-jre-headless)
    "${java_pkg[@]}" || { apt-get update -q && "${java_pkg[@]}"; }
  else
    echo "install-batch-engines: no java; install a Java 17+ runtime (Debian: openjdk-17-jre-headless) for pyspark" >&2
  fi
fi
python3 -m pip install pandas 'pyarrow>=12' pyspark ray
python3 - <<'PY'
import pyspark, ray
print(f"install-batch-engines: pyspark {pyspark.__version__}, ray {ray.__version__}")
PY
