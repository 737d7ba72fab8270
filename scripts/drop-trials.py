#!/usr/bin/env python3
"""Drop the trials of some methods at some points from an experiment's journal.

Usage: scripts/drop-trials.py NAME.trials.csv METHOD[,METHOD...] X[,X...]

Every row of a dropped trial goes, its closing "_done" row included, so the
journal stays valid (each trial's checksum covers its own rows only); a
resumed run (`dstein experiment ... --out-dir DIR`) then runs those trials
again with the binary of the day. It is how cells made before a fix of a
method are remade without rerunning the rest. The file is replaced
atomically; run it only when no experiment holds the journal's lock.
"""
import os
import sys
import tempfile


def main():
    path, methods, xs = sys.argv[1], set(sys.argv[2].split(",")), set(sys.argv[3].split(","))
    with open(path, newline="") as f:
        lines = f.readlines()
    if not lines or not lines[0].startswith("method,x,trial,metric,value"):
        sys.exit("%s: not a format-3 trial journal (header method,x,trial,metric,value)" % path)
    kept, dropped = [lines[0]], set()
    for line in lines[1:]:
        if line.startswith("#"):
            kept.append(line)
            continue
        f = line.split(",")
        if f[0] in methods and f[1] in xs:
            dropped.add((f[0], f[1], f[2]))
            continue
        kept.append(line)
    mode = os.stat(path).st_mode & 0o777
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".drop-")
    with os.fdopen(fd, "w", newline="") as out:
        out.writelines(kept)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(tmp, mode)  # mkstemp's file is 0600; keep the journal's mode
    os.replace(tmp, path)
    print("dropped %d trials (%d rows) from %s" % (len(dropped), len(lines) - len(kept), path))


if __name__ == "__main__":
    main()
