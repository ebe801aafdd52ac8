# Does SGLang's kernel import chain load with the image's own versions of the packages the image already holds?
set -u
mkdir -p /tmp/slim
held='aiohappyeyeballs aiohttp aiosignal einops frozenlist multidict pillow propcache psutil pygments yarl typing_extensions'
for f in .whl/*; do n=$(basename "$f" | cut -d- -f1 | tr 'A-Z' 'a-z'); case " $held " in *" $n "*) ;; *) cp "$f" /tmp/slim/;; esac; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-slim /tmp/slim/*.whl 2>&1 | tail -2
python3 -m pip list 2>/dev/null | grep -i -E "^(pillow|aiohttp|pygments|multidict|frozenlist|propcache|psutil|yarl|einops|aiosignal|aiohappyeyeballs|typing.extensions) "
PYTHONPATH=/tmp/site-slim:$PWD python3 - <<'PY'
import importlib, importlib.util, glob
for name in ['sglang.kernels.ops.activation.activation', 'sglang.kernels.ops.attention.decode_attention', 'sglang.kernels.ops.attention.metadata', 'sglang.kernels.ops.attention.rope', 'sglang.kernels.ops.diffusion.rope.matrix_rope', 'sglang.kernels.ops.mamba.causal_conv1d_triton', 'sglang.kernels.ops.mamba.triton_ops', 'sglang.kernels.ops.moe.fused_moe_triton_kernels', 'sglang.kernels.ops.moe.moe_fused_gate', 'sglang.kernels.ops.quantization.fp8_kernel']:
    try:
        importlib.import_module(name); print("OK", name)
    except Exception as error:
        print("FAIL", name, type(error).__name__, str(error)[:300])
for path in sorted(glob.glob("tasks/*/*/sglang*.py")):
    spec = importlib.util.spec_from_file_location("m_" + path.replace("/", "_")[:-3], path)
    try:
        module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); print("OK", path)
    except Exception as error:
        print("FAIL", path, type(error).__name__, str(error)[:300])
PY
