# A stand-in for nixpkgs holding only what flake.nix uses, so its outputs evaluate without fetching nixpkgs
# (tests/test_reproducibility.py). Derivations are plain attribute sets with an outPath; scripts keep their text.
{ system, config }:
let
  drv = name: { type = "derivation"; inherit name; outPath = "/nix/store/00000000000000000000000000000000-${name}"; };
  packageSet = { pydantic = 1; pyyaml = 1; omegaconf = 1; pytest = 1; packaging = 1; };
  python = version: drv "python${version}" // {
    withPackages = select: builtins.seq (select packageSet) (drv "python${version}-env");
  };
in
{
  lib = {
    makeLibraryPath = packages: builtins.concatStringsSep ":" (map (p: "${p}/lib") packages);
    optionalString = condition: text: if condition then text else "";
    optionals = condition: list: if condition then list else [ ];
    versions.majorMinor = version: version;
  };
  cudaPackages_12_8 = { cudatoolkit = drv "cudatoolkit-12.8"; cudaMajorMinorVersion = "12.8"; };
  stdenv.cc.cc.lib = drv "gcc-lib";
  zlib = drv "zlib";
  coreutils = drv "coreutils";
  gcc = drv "gcc";
  git = drv "git";
  uv = drv "uv";
  nixpkgs-fmt = drv "nixpkgs-fmt";
  python311 = python "3.11";
  python312 = python "3.12";
  writeShellApplication = { name, runtimeInputs ? [ ], text }: drv name // { inherit text runtimeInputs; };
  runCommand = name: env: script: drv name // { inherit script; };
  mkShell = { packages ? [ ], shellHook ? "" }: drv "shell" // { inherit packages shellHook; };
}
