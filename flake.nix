{
  # fastkernels, pinned: `nix develop` (CUDA 12.8 shell), `nix develop .#cpu`, `nix run . -- hardware=h100 tasks=level1`,
  # `nix run .#cpu -- tasks=smoke`, `nix flake check`. See README.md, "Reproducible runs".
  #
  # Nix pins the system side (Python, the CUDA 12.8 toolkit, compilers, the libraries manylinux wheels load); the
  # Python packages come from the same hash-pinned lock files the containers install (requirements/*.lock), into a
  # venv keyed by the lock's hash under $XDG_CACHE_HOME/fastkernels (first use downloads them; pip checks every hash).
  description = "fastkernels: GPU kernels scored against production kernels, with a pinned environment";

  # nixos-25.05 (commit of 2026-01-01); flake.lock pins the same revision with its narHash.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/ac62194c3917d5f474c1a844b6fd6da2db95077d";

  outputs = { self, nixpkgs }:
    let
      system = "x86_64-linux";
      pkgs = import nixpkgs {
        inherit system;
        config = { allowUnfree = true; cudaSupport = true; };
      };
      lib = pkgs.lib;
      cuda = pkgs.cudaPackages_12_8;
      commit = self.rev or self.dirtyRev or "unknown";

      # Each line: the lock it installs and the interpreter that lock was resolved for (scripts/lock.sh).
      lines = {
        gpu-cu128 = { python = pkgs.python312; withCuda = true; };
        cpu = { python = pkgs.python311; withCuda = false; };
      };

      # What manylinux wheels (torch, triton, numpy) dlopen from "the system" on a Nix-built interpreter.
      wheelLibs = [ pkgs.stdenv.cc.cc.lib pkgs.zlib ];

      # Environment for a line: library path (plus the host driver's libcuda, wherever the host keeps it), CUDA_HOME.
      lineEnv = name: line: ''
        export LD_LIBRARY_PATH=${lib.makeLibraryPath wheelLibs}''${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export PIP_DISABLE_PIP_VERSION_CHECK=1
      '' + lib.optionalString line.withCuda ''
        export CUDA_HOME=${cuda.cudatoolkit}
        export PATH=${cuda.cudatoolkit}/bin''${PATH:+:$PATH}
        # The driver's libcuda comes from the host: NixOS keeps it in /run/opengl-driver/lib; elsewhere link just the
        # driver's libraries into a private directory (adding /usr/lib to the path would mix two glibcs).
        if [ -e /run/opengl-driver/lib/libcuda.so.1 ]; then
          driver=/run/opengl-driver/lib
        else
          driver=''${XDG_CACHE_HOME:-$HOME/.cache}/fastkernels/driver-libs
          mkdir -p "$driver"
          for dir in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
            if [ -e "$dir/libcuda.so.1" ]; then
              ln -sf "$dir"/libcuda.so* "$dir"/libnvidia-ml.so* "$dir"/libnvidia-ptxjitcompiler.so* "$driver"/ 2>/dev/null || true
              break
            fi
          done
        fi
        export LD_LIBRARY_PATH=$driver:$LD_LIBRARY_PATH
        export TRITON_LIBCUDA_PATH=$driver
      '';

      # Prints the path of the line's venv, creating it from the lock (hash-checked) when it does not exist yet.
      lockedVenv = name: line: pkgs.writeShellApplication {
        name = "fastkernels-venv-${name}";
        runtimeInputs = [ line.python pkgs.coreutils ];
        text = ''
          lock=${self}/requirements/${name}.lock
          key=$(sha256sum "$lock" | cut -c1-16)
          venv=''${FASTKERNELS_VENV:-''${XDG_CACHE_HOME:-$HOME/.cache}/fastkernels/venv-${name}-$key}
          if [ ! -e "$venv/.fastkernels-locked" ]; then
            rm -rf "$venv"
            python3 -m venv "$venv" >&2
            "$venv/bin/pip" install --quiet --require-hashes -r "$lock" >&2
            touch "$venv/.fastkernels-locked"
          fi
          echo "$venv"
        '';
      };

      # `nix run`: the flake's own source tree (this commit) on the locked packages.
      runner = name: line: pkgs.writeShellApplication {
        name = "fastkernels";
        runtimeInputs = [ line.python pkgs.coreutils pkgs.gcc pkgs.git ];
        text = lineEnv name line + ''
          venv=$(${lockedVenv name line}/bin/fastkernels-venv-${name})
          export PYTHONPATH=${self}''${PYTHONPATH:+:$PYTHONPATH}
          export FASTKERNELS_GIT_COMMIT=${commit}
          export FASTKERNELS_LOCK_FILE=${self}/requirements/${name}.lock
          exec "$venv/bin/python" -m fastkernels "$@"
        '';
      };

      # `nix develop`: the working checkout (imported from $PWD) on the locked packages.
      shell = name: line: pkgs.mkShell {
        packages = [ line.python pkgs.gcc pkgs.git pkgs.uv ]
          ++ lib.optionals line.withCuda [ cuda.cudatoolkit ];
        shellHook = lineEnv name line + ''
          venv=$(${lockedVenv name line}/bin/fastkernels-venv-${name})
          source "$venv/bin/activate"
          export PYTHONPATH=$PWD''${PYTHONPATH:+:$PYTHONPATH}
          export FASTKERNELS_LOCK_FILE=$PWD/requirements/${name}.lock
          echo "fastkernels ${name} shell: $(python --version), venv $venv"
        '';
      };

      # Checks that need no network: every lock pin is hash-checked, the CUDA line matches the toolkit, the package
      # compiles, and the pure-Python parts (report merging, lock parsing) pass their tests.
      testPython = pkgs.python312.withPackages (ps: [ ps.pydantic ps.pyyaml ps.omegaconf ps.pytest ps.packaging ]);
    in
    {
      packages.${system} = {
        default = runner "gpu-cu128" lines.gpu-cu128;
        cpu = runner "cpu" lines.cpu;
        venv-gpu-cu128 = lockedVenv "gpu-cu128" lines.gpu-cu128;
        venv-cpu = lockedVenv "cpu" lines.cpu;
      };

      apps.${system} = {
        default = { type = "app"; program = "${self.packages.${system}.default}/bin/fastkernels"; };
        cpu = { type = "app"; program = "${self.packages.${system}.cpu}/bin/fastkernels"; };
      };

      devShells.${system} = {
        default = shell "gpu-cu128" lines.gpu-cu128;
        cpu = shell "cpu" lines.cpu;
      };

      checks.${system} = {
        lockfiles = pkgs.runCommand "fastkernels-lockfiles" { nativeBuildInputs = [ testPython ]; } ''
          cd ${self}
          python3 - <<'PY'
          import pathlib, re, sys
          for lock in sorted(pathlib.Path("requirements").glob("*.lock")):
              text = lock.read_text()
              pins = re.findall(r"^([a-z0-9][a-z0-9._-]*)==(\S+) \\$", text, re.M)
              blocks = re.split(r"^(?=[a-z0-9])", text, flags=re.M)
              unhashed = [b.split("==")[0] for b in blocks if "==" in b.splitlines()[0] and "--hash=sha256:" not in b]
              assert pins and not unhashed, f"{lock}: pins without hashes: {unhashed}"
              assert any(name == "torch" for name, _ in pins), f"{lock}: torch is not pinned"
              print(f"{lock}: {len(pins)} pins, all hashed")
          cu128 = pathlib.Path("requirements/gpu-cu128.lock").read_text()
          assert re.search(r"^nvidia-cuda-runtime-cu12==12\.8\.", cu128, re.M), "gpu-cu128.lock is not a CUDA 12.8 stack"
          PY
          [ "${lib.versions.majorMinor (cuda.cudaMajorMinorVersion or cuda.cudaVersion)}" = "12.8" ]
          touch $out
        '';
        pure-tests = pkgs.runCommand "fastkernels-pure-tests" { nativeBuildInputs = [ testPython ]; } ''
          cp -r ${self} src && chmod -R u+w src && cd src
          python3 -m compileall -q fastkernels
          python3 -m pytest -q -o addopts= -p no:cacheprovider tests/test_report_merge.py tests/test_lock.py
          touch $out
        '';
      };

      formatter.${system} = pkgs.nixpkgs-fmt;
    };
}
