#!/usr/bin/env python3
"""Times `runs list --local` and `runs prune --dry-run` on a seeded state bucket.

Run against a fresh emulator, with one or more cdkd-flow binaries to compare:

    scripts/with-emulator.sh .venv/bin/python scripts/bench_runs_history.py \
        [--runs 500] [--records 0] [--gap 0] BINARY [BINARY...]

Seeds RUNS local export runs of 6 objects each (run.json, plan.json, progress.json,
report.json, templates/App.json, changesets/App-import.json) and RECORDS state records
with 5 cdkd deployment-history objects each (what a whole-prefix listing also walks),
then runs each command 3 times per binary. With --gap S the newest 20 runs are written
S seconds after the others (the emulator stamps every object with the time it is written:
without a gap every run.json looks written at once, as no real bucket's are), and prints the median wall time and the
number of requests the emulator served (counted in its log). Only 127.0.0.1 is reached.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

import boto3
from concurrent.futures import ThreadPoolExecutor


def log_path():
    port = os.environ["AWS_ENDPOINT_URL"].rsplit(":", 1)[1]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, ".emulator", f"moto-{port}.log")


def log_lines():
    with open(log_path(), encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if '" ' in line and "HTTP/1.1" in line)


def put_all(s3, bucket, puts):
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda kv: s3.put_object(Bucket=bucket, Key=kv[0], Body=kv[1].encode()), puts))


def seed(s3, bucket, runs, records, gap):
    now = int(time.time() * 1000)
    puts = []
    newest = max(0, runs - 20) if gap else runs
    after_gap = None
    for i in range(runs):
        if i == newest:
            put_all(s3, bucket, puts)
            done = len(puts)
            print(f"seeded {done} objects; the newest 20 runs in {gap} s", flush=True)
            time.sleep(gap)
            after_gap = int(time.time() * 1000)
            puts = []
        rid = f"export-App{i}-{i:06d}"
        base = f"cdkd/_runs/{rid}/"
        started = now - (runs - i) * 3_600_000 if after_gap is None else after_gap + (i - newest) * 1000
        run = {"runId": rid, "kind": "export", "stack": f"App{i}", "args": ["export", f"App{i}", "--local"],
               "host": "elsewhere", "pid": 7, "startedMs": started,
               "endedMs": started + 60_000, "outcome": "succeeded"}
        puts += [(base + "run.json", json.dumps(run)), (base + "plan.json", "{}"),
                 (base + "progress.json", "{}"), (base + "report.json", json.dumps({"outcome": "migrated"})),
                 (base + "templates/App.json", "{}"), (base + "changesets/App-import.json", "{}")]
    for i in range(records):
        base = f"cdkd/Stack{i}/us-east-1/"
        puts.append((base + "state.json", "{}"))
        puts += [(base + f"deployments/{j}.json", "{}") for j in range(5)]
    put_all(s3, bucket, puts)
    return runs * 6 + records * 6


def measure(binary, bucket, args):
    walls, reqs = [], []
    for _ in range(3):
        before = log_lines()
        t = time.monotonic()
        out = subprocess.run([binary, "--state-bucket", bucket, *args], capture_output=True, text=True)
        walls.append(time.monotonic() - t)
        time.sleep(0.2)
        reqs.append(log_lines() - before)
        if out.returncode != 0:
            sys.exit(f"{binary} {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")
    return statistics.median(walls), statistics.median(reqs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--records", type=int, default=0)
    p.add_argument("--gap", type=int, default=0)
    p.add_argument("binaries", nargs="+")
    a = p.parse_args()
    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
    bucket = f"bench-runs-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    n = seed(s3, bucket, a.runs, a.records, a.gap)
    print(f"seeded {n} objects: {a.runs} runs x 6, {a.records} records x 6")
    for b in a.binaries:
        for args in (["runs", "list", "--local"], ["runs", "prune", "--older-than", "1s", "--dry-run",
                                                   "--backend-stack", "no-backend"]):
            if "prune" in args and subprocess.run([b, "runs", "prune", "--help"], capture_output=True).returncode != 0:
                continue
            wall, req = measure(b, bucket, args)
            print(f"{b}: {' '.join(args)}: {wall:.2f} s median of 3, {req:.0f} requests")


if __name__ == "__main__":
    main()
