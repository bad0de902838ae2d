#!/usr/bin/env python3
"""Misbehaving: hangs. It starts a helper process and both wait forever, so the harness must
kill the whole process group at the timeout. schedcheck conform reports fault.timeout."""

import subprocess
import sys
import time

if __name__ == "__main__":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    print('{"protocol": 1,', flush=True)  # starts an answer it never finishes
    while True:
        time.sleep(60)
