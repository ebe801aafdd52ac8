#!/usr/bin/env bash
# Packs everything a GPU machine without network access needs to run fastkernels from a lock file: every locked
# wheel (hash-checked against the lock), the project's source at HEAD, and an install script.
#
#   scripts/pack-wheels.sh [gpu-cu128|cpu] [DEST]        (default: gpu-cu128 into wheelhouse/<line>)
#
# Then copy DEST to the machine and run `bash DEST/install.sh [VENV]` there (default VENV: DEST/venv): it creates the
# venv with the machine's python3 (3.12 for gpu-cu128, 3.11 for cpu: the lock's interpreter), installs the wheels with
# --no-index --require-hashes (no network, nothing the lock does not name), unpacks the source next to them and
# installs it editable, and prints the command to run.
# Sizes (measured): cpu 516 MB of wheels, 2.2 GB installed; gpu-cu128 3.9 GB of wheels (nvidia-* 2.8 GiB, torch 874 MB), 7.2 GB installed.
set -euo pipefail
cd "$(dirname "$0")/.."
line=${1:-gpu-cu128}
dest=${2:-wheelhouse/$line}
lock="requirements/$line.lock"
[[ -f "$lock" ]] || { echo "pack-wheels.sh: no lock file $lock (lines: $(ls requirements/*.lock | xargs -n1 basename | sed 's/.lock$//' | tr '\n' ' '))" >&2; exit 2; }
case "$line" in cpu) python=3.11 ;; *) python=3.12 ;; esac
mkdir -p "$dest"
# --no-deps: the lock is already the whole closure; the platform flags fetch the target's wheels from any host.
python3 -m pip download --no-deps --require-hashes -r "$lock" -d "$dest" \
  --python-version "$python" --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any
# antlr4-python3-runtime (hydra's parser) is published as a source archive only: older pips build it with `wheel`,
# which is no runtime dependency and so not in the lock; it only builds the archive whose hash the lock checks.
python3 -m pip download --no-deps --only-binary=:all: -d "$dest" wheel
# The source (conf/, tasks/, agents/ are not in a wheel): HEAD's tracked files, and the commit env.json should name.
commit=$(git rev-parse HEAD)
git archive --format=tar.gz -o "$dest/fastkernels-src.tar.gz" HEAD
[[ -z "$(git status --porcelain)" ]] || echo "pack-wheels.sh: warning: uncommitted changes are not packed (HEAD $commit)" >&2
cp "$lock" "$dest/"
cat > "$dest/install.sh" <<INSTALL
#!/usr/bin/env bash
# Installs fastkernels $commit from this directory without network: bash install.sh [VENV] (default: venv here)
set -euo pipefail
here=\$(cd "\$(dirname "\$0")" && pwd)
venv=\${1:-\$here/venv}
python3 -c 'import sys; assert sys.version_info[:2] == tuple(map(int, "$python".split("."))), "this wheelhouse is for Python $python"'
python3 -m venv "\$venv"
"\$venv/bin/pip" install --no-index --find-links "\$here" --require-hashes -r "\$here/$line.lock"
mkdir -p "\$here/src" && tar xzf "\$here/fastkernels-src.tar.gz" -C "\$here/src"
"\$venv/bin/pip" install --no-index --no-deps --no-build-isolation -e "\$here/src"
echo "installed; run: cd \$here/src && FASTKERNELS_GIT_COMMIT=$commit \$venv/bin/python -m fastkernels hardware=auto"
INSTALL
chmod +x "$dest/install.sh"
du -sh "$dest"
