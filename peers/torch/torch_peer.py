"""The PyTorch peer as scripts/peers runs it (peers/README.md, "A file-route peer"):

    torch_peer.py INPUTS.npz OUT_DIR

Runs both recipes of hf_rope.py (HF transformers' LLaMA `rotate_half` and GPT-J
`rotate_every_two`, peers/torch/README.md) over `ropecheck golden export --format npz` and writes
OUT_DIR/torch-llama.npz and OUT_DIR/torch-gptj.npz (+ .skipped.json). Prints its RESULTS.md header
line on stdout; exits 3 with a one-line reason on stderr when torch cannot be imported.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPES = ("llama", "gptj")


def main():
    if len(sys.argv) != 3:
        print("usage: torch_peer.py INPUTS.npz OUT_DIR", file=sys.stderr)
        return 2
    try:
        import torch
        sys.path.insert(0, HERE)
        import hf_rope
    except ImportError as why:
        print(f"cannot import torch: {why}", file=sys.stderr)
        return 3
    inputs, out_dir = sys.argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for recipe in RECIPES:
        path = os.path.join(out_dir, f"torch-{recipe}.npz")
        done, skipped = hf_rope.peerlib.run_over(inputs, path, lambda s, x, p, r=recipe: hf_rope.apply(s, x, p, r))
        print(f"torch-{recipe}: {done} outputs, {skipped} skipped", file=sys.stderr)
    print(f"PyTorch: Debian python3-torch {torch.__version__} (HF transformers' LLaMA and GPT-J recipes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
