"""Eager programs whose shapes change every step: torchish vs PyTorch seconds (one run).

    python benchmarks/shape_churn.py [--case ctc|lm|decode] [--compiles] [--no-churn]

Every eager kernel of torchish is compiled once per (op, shapes); PyTorch pays nothing for a new
shape. Cases: (ctc) a bidirectional 2-layer GRU over pack_padded_sequence with CTC loss and
greedy decoding, a fresh batch (new lengths) each of 20 steps; (lm) an LSTM language model, 20
steps with a random sequence length 5..40; (decode) greedy decoding with a small causal
attention model, the sequence growing by one token for 30 steps (the whole prefix re-run each
step, no cache). Each case runs in a fresh process per library (cold caches, as a user's
script starts), timed from its first op to its last (imports excluded); PyTorch runs on one
thread (THREADS=n to change: two threads spin on a loaded 2-core machine). `--compiles` also
prints how many XLA compilations the torchish run made (jax_log_compiles); `--no-churn` also
times torchish with every shape compiled at XLA's full optimization (torchish/_eager_jit.py's
`CHURN` path off: the time before it).
"""
import argparse
import os
import subprocess
import sys
import time

CASES = ("ctc", "lm", "decode")


def case_ctc(torch, steps=20):
    nn, F = torch.nn, torch.nn.functional
    from_pack = torch.nn.utils.rnn
    C, FEAT, H, T_MAX, S_MAX, N = 6, 8, 16, 12, 4, 6
    torch.manual_seed(0)
    proto = torch.randn(C, FEAT)

    def batch():
        label_lens = torch.randint(1, 5, (N,))
        x = torch.zeros(N, T_MAX, FEAT)
        targets = torch.zeros(N, S_MAX, dtype=torch.long)
        lens = []
        for i, k in enumerate(label_lens.tolist()):
            lab = torch.randint(1, C, (k,))
            frames = proto[lab].repeat_interleave(torch.randint(2, 4, (k,)), dim=0)
            x[i, :frames.size(0)] = frames + 0.3 * torch.randn_like(frames)
            targets[i, :k] = lab
            lens.append(frames.size(0))
        return x, torch.tensor(lens), targets, label_lens

    proj, out = nn.Linear(FEAT, H), nn.Linear(2 * H, C)
    rnn = nn.GRU(H, H, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
    params = [*proj.parameters(), *rnn.parameters(), *out.parameters()]
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.Adam(params, lr=1e-2)
    total = 0.0
    for _ in range(steps):
        x, lens, targets, label_lens = batch()
        packed = from_pack.pack_padded_sequence(F.relu(proj(x)), lens, batch_first=True,
                                                enforce_sorted=False)
        y, _ = rnn(packed)
        y, out_lens = from_pack.pad_packed_sequence(y, batch_first=True, total_length=T_MAX)
        logp = out(y).log_softmax(-1)
        loss = ctc(logp.transpose(0, 1), targets, out_lens, label_lens)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        best = logp.detach().argmax(-1)
        for b in range(N):
            seq = torch.unique_consecutive(best[b, :out_lens[b]])
            total += len(seq[seq != 0].tolist())
        total += loss.item()
    return total


def case_lm(torch, steps=20):
    nn, F = torch.nn, torch.nn.functional
    V, E, H, B = 100, 32, 64, 8
    torch.manual_seed(0)
    emb, lstm, head = nn.Embedding(V, E), nn.LSTM(E, H), nn.Linear(H, V)
    params = [*emb.parameters(), *lstm.parameters(), *head.parameters()]
    opt = torch.optim.SGD(params, lr=0.5)
    total = 0.0
    for _ in range(steps):
        T = int(torch.randint(5, 41, ()))
        data = torch.randint(0, V, (T + 1, B))
        y, _ = lstm(emb(data[:-1]))
        loss = F.cross_entropy(head(y).view(-1, V), data[1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 0.25)
        opt.step()
        total += loss.item()
    return total


def case_decode(torch, steps=30):
    nn, F = torch.nn, torch.nn.functional
    V, D, B, HEADS = 50, 32, 4, 4
    torch.manual_seed(0)
    emb, pos = nn.Embedding(V, D), nn.Embedding(64, D)
    qkv, proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
    ln1, ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
    mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
    head = nn.Linear(D, V)
    seq = torch.randint(0, V, (B, 1))
    with torch.no_grad():
        for _ in range(steps):
            T = seq.size(1)
            h = emb(seq) + pos(torch.arange(T))
            q, k, v = qkv(ln1(h)).view(B, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + proj(a.transpose(1, 2).reshape(B, T, D))
            h = h + mlp(ln2(h))
            nxt = head(h[:, -1]).softmax(-1).argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], dim=1)
    return float(seq.sum())


def run_one(lib, case):
    if lib.startswith("torchish"):
        import torchish as torch
        if lib == "torchish-no-churn":
            torch._eager_jit.CHURN = float("inf")
    else:
        import torch
        torch.set_num_threads(int(os.environ.get("THREADS", 1)))
    fn = globals()["case_" + case]
    start = time.perf_counter()
    value = fn(torch)
    return time.perf_counter() - start, value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=CASES, action="append")
    parser.add_argument("--compiles", action="store_true")
    parser.add_argument("--no-churn", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        lib, case = args.child
        if lib.startswith("torchish") and args.compiles:
            import logging
            import jax
            jax.config.update("jax_log_compiles", True)
            counter = {"n": 0}

            class Count(logging.Handler):
                def emit(self, record):
                    if record.getMessage().startswith("Finished XLA compilation"):
                        counter["n"] += 1
            logging.getLogger("jax").addHandler(Count())
            logging.getLogger("jax").propagate = False
        seconds, value = run_one(lib, case)
        extra = f" {counter['n']}" if lib.startswith("torchish") and args.compiles else ""
        print(f"{seconds:.3f} {value!r}{extra}")
        return
    print(f"load: {os.getloadavg()[0]:.2f}")
    libs = ("torchish-no-churn",) * args.no_churn + ("torchish", "torch")
    print(f"{'case':8}" + (f" {'no-churn s':>11}" if args.no_churn else "")
          + f" {'torchish s':>11} {'PyTorch s':>10} {'ratio':>7}"
          + (f" {'compiles':>9}" if args.compiles else ""))
    for case in args.case or CASES:
        res = {}
        for lib in libs:
            cmd = [sys.executable, __file__, "--child", lib, case]
            if args.compiles:
                cmd.append("--compiles")
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"{lib} {case} failed:\n{out.stderr[-3000:]}")
            res[lib] = out.stdout.split()
        a, b = float(res["torchish"][0]), float(res["torch"][0])
        before = f" {float(res['torchish-no-churn'][0]):11.2f}" if args.no_churn else ""
        compiles = "/".join(res[lib][2] for lib in libs[:-1]) if args.compiles else ""
        print(f"{case:8}{before} {a:11.2f} {b:10.2f} {a / b:7.1f} {compiles:>9}")


if __name__ == "__main__":
    main()
