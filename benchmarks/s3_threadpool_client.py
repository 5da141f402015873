"""A plain boto3 S3 client on a thread pool: what a Python user would write to load RGW (bench_loadgen compares).

    python s3_threadpool_client.py ENDPOINT BUCKET put|get|cleanup N CONCURRENCY SIZE [KEYS]

Keys from CEPHBENCH_S3_ACCESS_KEY / CEPHBENCH_S3_SECRET_KEY. `put` creates BUCKET and writes objects
obj-0..obj-N-1; `get` reads N random keys of the first KEYS (default N) objects; `cleanup` deletes the objects
and the bucket. Prints one JSON line: {"ops": n, "errors": e, "elapsed_s": t}.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config


def main() -> int:
    endpoint, bucket, op, n, conc, size = sys.argv[1:7]
    n, conc, size = int(n), int(conc), int(size)
    keys = int(sys.argv[7]) if len(sys.argv) > 7 else n
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=os.environ["CEPHBENCH_S3_ACCESS_KEY"],
        aws_secret_access_key=os.environ["CEPHBENCH_S3_SECRET_KEY"],
        config=Config(max_pool_connections=conc, retries={"max_attempts": 1}, s3={"addressing_style": "path"},
                      request_checksum_calculation="when_required", response_checksum_validation="when_required"))
    body = os.urandom(size)
    rng = random.Random(1)
    errors = 0

    def put(i: int) -> None:
        s3.put_object(Bucket=bucket, Key=f"obj-{i}", Body=body)

    def get(i: int) -> None:
        s3.get_object(Bucket=bucket, Key=f"obj-{rng.randrange(keys)}")["Body"].read()

    def delete(i: int) -> None:
        s3.delete_object(Bucket=bucket, Key=f"obj-{i}")

    if op == "put":
        s3.create_bucket(Bucket=bucket)
    fn = {"put": put, "get": get, "cleanup": delete}[op]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=conc) as pool:
        for fut in [pool.submit(fn, i) for i in range(n)]:
            try:
                fut.result()
            except Exception:  # noqa: BLE001 - counted, as a benchmark client would
                errors += 1
    elapsed = time.monotonic() - t0
    if op == "cleanup":
        s3.delete_bucket(Bucket=bucket)
    print(json.dumps({"ops": n - errors, "errors": errors, "elapsed_s": elapsed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
