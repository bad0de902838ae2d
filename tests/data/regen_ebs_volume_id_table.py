"""Regenerate ebs_volume_id_table.json: in-tree AWS EBS volume ids as csi-translation-lib v0.36.1 translates them.

Run from the repository root with the Go toolchain (the Go module proxy or a warm module cache):
    python tests/data/regen_ebs_volume_id_table.py
It builds adapters/ebsoracle (KubernetesVolumeIDToEBSVolumeID itself, on Go's net/url and net/netip) and records,
per id, the volume handle or the error text. tests/plugins/test_csi_translation_ebs.py holds
reference_impl/plugins/csi_translation.py to the recorded answers (without Go).
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HOSTS = ["us-east-1a", "", "a[b", "[", "]", "[::1]", "[::1]:80", "[::1]:8x", "[::1", "[::1]x", "[fe80::1%25en0]",
         "[fe80::1%en0]", "[fe80::1%25en%200]", "[fe80::1%25%41]", "[fe80::1%25%0a]", "[fe80::1%25%2F]",
         "[fe80::1%25]", "[fe80::1%25a%25b]", "[1.2.3.4]", "[::ffff:1.2.3.4]", "[::ffff:1.2.3]", "[::1::2]",
         "[12345::]", "[g::1]", "[]", "[:::]", "[1:2:3:4:5:6:7:8:9]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7::]",
         "[::1.2.3.4]", "[::1.2.3.256]", "[::01.2.3.4]", "[0:0:0:0:0:0:1.2.3.4]", "[1:2:3:4:5:6:7:1.2.3.4]",
         "[fe80::1%25ü]", "[%41::1]", "[::%31]", "[[::1]]", "[::1]]", "[::1]:80:90", "[v1.x]", "[::1%25abc]:443",
         "host:80", "host:x", "host:", ":80", ":", "a:1:2", "h%41", "h%C3%A9", "h%zz", "h%7f", "h%25", "h%41%",
         "a b", "a!b", "a|b", "a^b", "a{b", "é", "a\"b", "a<b>", "a$&'()*+,;=b", "a~b_c.d-e", "h%2"]
USERS = ["", "u@", "u:p@", "u%zz@", "u%41@", "u:p%zz@", "u p@", "u@v@", "ü@", "u!$&'()*+,;=:@", "u#@", "u[@",
         "%@", ":@", "u%2@"]
PATHS = ["/vol-1", "/vol-%41", "/vol-%zz", "/vol-a/b", "//vol-1//", "/vol-%2F", "/vol-%ff", "", "/x", "/vol-é",
         "/vol-%", "/vol-1%2", "/vol-\t", "/vol-a b", "/vol-%C3%A9", "/vol-?"]
QUERIES = ["", "?q", "?", "??", "?a=%zz"]
FRAGMENTS = ["", "#f", "#%zz", "#%41", "#\x01", "#a#b", "#"]
EXTRA = ["vol-1", "aws:/vol-1", "aws:vol-1", "AWS://x/vol-1", "aws://us\x01/vol-1", "aws://x/vol-1\x7f",
         "aws:///vol-1", "aws://", "aws://x", "aws://x/", "aws://x/vol-", "aws://x/vol-1\n", "aws://x/Vol-1",
         "aws://x/ vol-1", "aws://x/vol-1/", "aws://x/vol-1//", "aws://x//vol-1", "aws://x/vol-1\x00"]


def ids() -> list[str]:
    out: list[str] = []
    for part, values in (("host", HOSTS), ("user", USERS), ("path", PATHS), ("query", QUERIES),
                         ("fragment", FRAGMENTS)):
        for value in values:
            chosen = {"host": "us-east-1a", "user": "", "path": "/vol-1", "query": "", "fragment": "", part: value}
            out.append(f"aws://{chosen['user']}{chosen['host']}{chosen['path']}{chosen['query']}{chosen['fragment']}")
    rng = random.Random(20261126)
    for _ in range(700):
        out.append("aws://" + rng.choice(USERS) + rng.choice(HOSTS) + rng.choice(PATHS) + rng.choice(QUERIES)
                   + rng.choice(FRAGMENTS))
    out += EXTRA
    return list(dict.fromkeys(out))


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    cases = ids()
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "ebsoracle"
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=root / "adapters" / "ebsoracle", check=True)
        answers = subprocess.run([str(binary)], input="".join(json.dumps(c) + "\n" for c in cases),
                                 capture_output=True, text=True, check=True).stdout.splitlines()
    rows = [{"id": case, **json.loads(answer)} for case, answer in zip(cases, answers, strict=True)]
    table = {"source": "k8s.io/csi-translation-lib v0.36.1 KubernetesVolumeIDToEBSVolumeID, Go "
                       + subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip(),
             "cases": rows}
    target = root / "tests" / "data" / "ebs_volume_id_table.json"
    target.write_text(json.dumps(table, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} cases written to {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
