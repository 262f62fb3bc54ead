"""Converting a folder of Godot 3 saves to Godot 4 on Spark, through ``batch.convert_bytes``.

    python3 examples/batch/spark_recipe.py SRC DST REPORT.parquet [--password P] [--master local[2]]

Spark reads every file below SRC as one row (the ``binaryFile`` source: path and content);
``mapInPandas`` converts each partition's files with :func:`godot_formats.batch.convert_bytes` (the
code path of the command line and of the process pool, so the rows and their wording are the
same), writes each output below DST, and returns one report row per input
(:data:`godot_formats.batch.ROW_FIELDS`, typed by :func:`godot_formats.batch.arrow_schema`).  The
report is written as Parquet, which DuckDB, pandas and Spark read.

``convert_bytes`` never raises, so a bad save is a failed row, not a failed task; Spark's task
retries (``spark.task.maxFailures``) then only matter for a worker that dies, and are capped at 1
here so that a save that crashes its worker is not retried.

What this recipe sets, and why (each was needed on a first run):

- ``spark.sql.files.openCostInBytes`` of 64 kB and ``maxPartitionBytes`` of 64 MB: Spark counts
  each file as its size plus the open cost (4 MB by default) and fills a partition up to
  ``maxPartitionBytes``, or up to the folder's total over the cores when that is smaller.  So a
  task converts up to about a thousand small saves (a task's start, its Python worker and its Arrow
  batches cost about a second: spread over few files, they are most of the run), and a folder
  smaller than 64 MB per core is still split evenly across the cores.  (1 MB partitions, this
  recipe's first setting, made 20 tasks of 15 saves from 301 saves, and 70,000 tasks from a
  million);
- ``spark.sql.execution.arrow.maxRecordsPerBatch``: a batch of the pandas frame holds the saves'
  bytes, so keep it to a few hundred files;
- ``PYSPARK_PYTHON`` = this interpreter, so the workers import the same godot_formats;
- ``spark.ui.enabled=false`` and a local bind address, for a quiet local run.

The outputs are written locally (DST must be a folder every executor sees: on a real cluster, a
shared file system; for an object store write ``out`` with fsspec instead of ``write_atomic``).
The report does not replace the resume journal of ``batch.convert``: rerun on the inputs whose
row is not converted or unchanged.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from godot_formats import batch
from godot_formats.layers.files import write_atomic


def convert_partition(frames: Iterator[Any], src: str, dst: str, to: str, password: str | None) -> Iterator[Any]:
    """The ``mapInPandas`` function: each frame's files converted, written below ``dst``, and their rows."""
    import pandas as pd

    prefix = Path(src).resolve().as_posix().rstrip("/") + "/"
    for frame in frames:
        rows = []
        for path, content in zip(frame["path"], frame["content"]):
            key = path.split(prefix, 1)[-1]  # Spark's path is a URI (file:/...): the key is relative to src
            out, row = batch.convert_bytes(bytes(content), name=key, to=to, password=password)
            if out is not None:
                dest = Path(dst) / key
                try:
                    write_atomic(dest, out)
                    row["output_path"] = str(dest)
                except OSError as e:
                    row.update(status="failed", error_kind="io", error=f"cannot write {dest}: {e.strerror}")
            rows.append(row)
        table = pd.DataFrame(rows, columns=list(batch.ROW_FIELDS))
        yield table.astype({"input_size": "Int64", "output_size": "Int64"})


def spark_schema() -> Any:
    """:func:`batch.arrow_schema` as Spark's StructType."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(batch.arrow_schema())


def session(master: str = "local[2]") -> Any:
    """A local Spark session set up for many small files (see the module's docstring)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (SparkSession.builder.master(master).appName("godot-formats migration")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.task.maxFailures", "1")
            .config("spark.sql.files.maxPartitionBytes", str(64 << 20))
            .config("spark.sql.files.openCostInBytes", str(64 << 10))
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "256")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def convert(spark: Any, src: str, dst: str, *, to: str = "godot4", password: str | None = None) -> Any:
    """The report of converting every file below ``src`` into ``dst``, as a Spark DataFrame (lazy:
    the conversion runs when it is written or collected, once)."""
    files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
             .load(str(Path(src).resolve())).select("path", "content"))
    return files.mapInPandas(lambda frames: convert_partition(frames, src, dst, to, password), spark_schema())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("report", help="the report: a Parquet folder Spark writes")
    ap.add_argument("--password")
    ap.add_argument("--to", default="godot4")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    spark = session(args.master)
    try:
        report = convert(spark, args.src, args.dst, to=args.to, password=args.password)
        report.write.mode("overwrite").parquet(args.report)
        counts = spark.read.parquet(args.report).groupBy("status").count().collect()
        print(", ".join(f"{r['count']} {r['status']}" for r in counts))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
