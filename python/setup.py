"""Builds the dstein binary into the package when it is installed.

The package drives the dstein command-line binary. Installing it from the
repository (pip install --no-build-isolation ./python) runs `go build` on
the repository's cmd/dstein and ships the binary inside the package
(dstein/bin/dstein). Set DSTEIN_SKIP_GO_BUILD=1 to install without it; the
package then uses $DSTEIN_BIN or a dstein on the PATH.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithGo(build_py):
    def run(self):
        super().run()
        if os.environ.get("DSTEIN_SKIP_GO_BUILD"):
            return
        here = os.path.dirname(os.path.abspath(__file__))
        repo = os.path.dirname(here)
        if not os.path.exists(os.path.join(repo, "go.mod")) or not os.path.isdir(os.path.join(repo, "cmd", "dstein")):
            raise SystemExit("dstein: setup.py must be run from python/ inside the dstein repository "
                             "(pip install --no-build-isolation ./python); found no go.mod in %s" % repo)
        go = shutil.which("go")
        if go is None:
            raise SystemExit("dstein: building the package needs Go (https://go.dev/dl/) on the PATH, "
                             "or DSTEIN_SKIP_GO_BUILD=1 and a dstein binary on the PATH or in $DSTEIN_BIN")
        out = os.path.join(os.path.abspath(self.build_lib), "dstein", "bin", "dstein")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.check_call([go, "build", "-o", out, "./cmd/dstein"], cwd=repo)


setup(cmdclass={"build_py": BuildWithGo})
