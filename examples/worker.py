#!/usr/bin/env python3
"""A taskhandle worker in Python 3, standard library only (docs/workers.md, "Clients").

It works one remote skill, `py.checksum` ({"text", "rounds"}): `rounds` rounds of sha256 over the
text, a progress report per round, the hex digest as an artifact. Run it beside a server whose
skills module declares the skill (spec-tests/fixtures/remote-skills.mjs does):

    TASKHANDLE_URL=http://127.0.0.1:41241 WORKER_NAME=py-1 python3 examples/worker.py

TASKHANDLE_API_KEY, when set, is sent as X-API-Key (a key that WORKERS names). Ctrl-C (or SIGTERM)
releases the job it holds, so that another worker takes it over at once.
"""
import hashlib
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

URL = os.environ.get("TASKHANDLE_URL", "http://127.0.0.1:41241").rstrip("/")
API_KEY = os.environ.get("TASKHANDLE_API_KEY")
NAME = os.environ.get("WORKER_NAME", f"python-{os.getpid()}")
WAIT_MS = 20_000  # how long a claim waits on the server for a job (long poll)


class LeaseLost(Exception):
    """409 "lease-lost": the task is no longer ours (canceled, expired, taken over). Drop it."""


class Problem(Exception):
    """Any other refusal; the server's `detail` says what to do."""


class Refused(Exception):
    """Raised by a skill to fail its task with this message (shown to the task's owner)."""


def call(path, body=None, token=None, timeout=WAIT_MS / 1000 + 30):
    """POSTs JSON to /v1/workers<path> and answers the JSON reply."""
    headers = {"Accept": "application/json"}
    if API_KEY:
        headers["X-API-Key"] = API_KEY
    if token:
        headers["Lease-Token"] = token  # every write to a claimed task carries its lease
    data = b""
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(f"{URL}/v1/workers{path}", data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return json.loads(text) if text else {}
    except urllib.error.HTTPError as error:  # a problem document (RFC 9457)
        try:
            problem = json.loads(error.read())
        except ValueError:
            problem = {}
        detail = problem.get("detail", f"HTTP {error.code}")
        if error.code == 409 and problem.get("reason") == "lease-lost":
            raise LeaseLost(detail) from None
        raise Problem(detail) from None


class Held:
    """One claimed job: its writes, and a thread that heartbeats its lease."""

    def __init__(self, job):
        self.job = job
        self.path = f"/jobs/{job['taskId']}"
        self.token = job["lease"]["token"]
        self.stopped = threading.Event()  # set on a cancel or a lost lease: write nothing more
        self.ended = threading.Event()  # set when the run is over: the heartbeat stops
        every = job["lease"]["heartbeatMs"] / 1000
        threading.Thread(target=self._heartbeat, args=(every,), daemon=True).start()

    def _heartbeat(self, every):
        while not self.ended.wait(every):
            try:
                self.write("heartbeat")
            except LeaseLost:
                return
            except (Problem, OSError) as error:  # it may pass: the lease lasts three beats
                print(f"heartbeat of {self.path} failed: {error}", file=sys.stderr)

    def write(self, what, body=None):
        try:
            lease = call(f"{self.path}/{what}", body, self.token)
        except LeaseLost:
            self.stopped.set()
            raise
        if lease.get("state") == "canceled":  # the owner canceled the task
            self.stopped.set()
        return lease

    def progress(self, percent, message):
        self.write("progress", {"percent": percent, "message": message})


def checksum(held):
    """The skill: `rounds` rounds of sha256 over `text`, reporting progress after each."""
    text, rounds = held.job["input"]["text"], held.job["input"].get("rounds", 1)
    if not text:
        raise Refused("there is no text to hash")
    value = text
    for n in range(1, rounds + 1):
        if held.stopped.is_set():
            raise LeaseLost("stopped")
        value = hashlib.sha256(value.encode()).hexdigest()
        held.progress(round(100 * n / rounds), f"round {n} of {rounds}")
        time.sleep(0.05)  # a stand-in for real work, so that the progress can be watched
    held.write("artifacts", {"name": "sha256.txt", "parts": [{"text": value, "mediaType": "text/plain"}]})
    return {"message": f"sha256 after {rounds} rounds: {value}"}


SKILLS = {"py.checksum": checksum}


def run(held):
    """Runs one job and writes how it ended (nothing at all if the lease was lost)."""
    job = held.job
    try:
        end = ("complete", SKILLS[job["skill"]](held))
    except LeaseLost:
        end = None
    except Refused as error:
        end = ("fail", {"message": str(error)})
    except Exception as error:  # a bug: the owner is told only that it failed, the cause stays here
        print(f"{job['taskId']} failed: {error!r}", file=sys.stderr)
        end = ("fail", {"message": f'an internal error in the worker "{NAME}" (it logged the cause)'})
    try:
        if end is not None and not held.stopped.is_set():
            held.write(*end)
        else:
            print(f"dropped {job['taskId']}: canceled, or no longer ours", file=sys.stderr)
    except (LeaseLost, Problem, OSError) as error:
        print(f"{job['taskId']}: {end[0]} not written: {error}", file=sys.stderr)
    finally:
        held.ended.set()


def stop(signum, frame):
    raise KeyboardInterrupt  # SIGTERM as Ctrl-C: the main loop releases what it holds


def main():
    signal.signal(signal.SIGTERM, stop)
    held = None
    backoff = 1
    print(json.dumps({"msg": "worker started", "worker": NAME, "url": URL}), flush=True)
    try:
        while True:
            try:
                claim = {"skills": list(SKILLS), "max": 1, "waitMs": WAIT_MS, "worker": NAME}
                jobs = call("/claims", claim)["jobs"]
                backoff = 1
            except (Problem, OSError) as error:  # the server is down or refused: try again later
                print(f"claim failed: {error}; again in {backoff} s", file=sys.stderr)
                time.sleep(backoff)
                backoff = min(backoff * 2, 30)
                continue
            for job in jobs:
                held = Held(job)
                run(held)
                held = None
    except KeyboardInterrupt:
        if held is not None and not held.ended.is_set():
            held.ended.set()
            try:
                call(f"{held.path}/release", token=held.token)  # another worker takes it over now
                print(f"released {held.job['taskId']}", file=sys.stderr)
            except (LeaseLost, Problem, OSError) as error:
                print(f"release failed: {error}", file=sys.stderr)


if __name__ == "__main__":
    main()
