"""Spike (issue 19): run each torch-applicable case's steps as one function compiled with
torch.compile, compare with eager: the values and the aliasing of every name the case's
expectations mention. Measures compile time per item."""
import sys, time, warnings, operator, statistics, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "tests"))
from corpus_cases import corpus
from conformance import registry
from conformance.ir import Ref, Const, Seq, SliceExpr, PyOp, Op, NameTarget, ItemTarget, AttrTarget
from conformance import kinds

backend = sys.argv[1] if len(sys.argv) > 1 else "aot_eager"
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 10**9
import torch, torch._dynamo
adapter = registry.get_adapter("torch")
adapter.setup()
ops = adapter.ops

def ev(e, env):
    if isinstance(e, Ref): return env[e.name]
    if isinstance(e, Const): return e.value
    if isinstance(e, Seq):
        items = [ev(i, env) for i in e.items]
        return tuple(items) if e.tuple_ else items
    if isinstance(e, SliceExpr): return slice(ev(e.start, env), ev(e.stop, env), ev(e.step, env))
    if isinstance(e, PyOp): return ops["op:" + e.op](*[ev(a, env) for a in e.args])
    if isinstance(e, Op):
        return ops[e.key](*[ev(a, env) for a in e.args], **{k: ev(v, env) for k, v in e.kwargs})
    if e is None: return None
    raise TypeError(e)

def run_steps(steps, env):
    for s in steps:
        if s.kind == "block":
            with ops["block:" + s.block]():
                run_steps(s.body, env)
            continue
        if s.kind == "expr":
            ev(s.value, env); continue
        if s.kind == "assign":
            v = ev(s.value, env)
            vals = [v] if len(s.targets) == 1 else list(v)
            for t, val in zip(s.targets, vals):
                if isinstance(t, NameTarget): env[t.name] = val
                elif isinstance(t, ItemTarget): ops["op:setitem"](ev(t.obj, env), ev(t.index, env), val)
                else: ops["setattr:" + t.attr](ev(t.obj, env), val)
            continue
        t = s.targets[0]; v = ev(s.value, env)
        if isinstance(t, NameTarget): env[t.name] = ops["op:" + s.aug_op](env[t.name], v)
        elif isinstance(t, ItemTarget):
            o, i = ev(t.obj, env), ev(t.index, env)
            ops["op:setitem"](o, i, ops["op:" + s.aug_op](ops["op:getitem"](o, i), v))
        else:
            o = ev(t.obj, env); ops["setattr:" + t.attr](o, ops["op:" + s.aug_op](ops["attr:" + t.attr](o), v))

def mentioned(case):
    names = set()
    for kind, entries in case.expect_for("torch").checks.items():
        k = kinds.get(kind)
        try: names |= set(k.names_in(entries))
        except Exception: pass
    return names

def program(case, outs, inputs):
    def body(*args):
        env = dict(zip(inputs, args))
        run_steps(case.steps, env)
        return tuple(env.get(n) for n in outs)
    return body

def snapshot(vals, inputs_t):
    out = []
    for v in vals:
        if isinstance(v, torch.Tensor) and v.layout == torch.strided:
            try: out.append(("t", v.detach().cpu().resolve_conj().resolve_neg().clone(), v.dtype, tuple(v.shape)))
            except Exception as e: out.append(("t?", repr(e)[:80]))
        else: out.append(("o", type(v).__name__))
    return out

results = []
cases = [c for c in corpus() if c.device == "cpu" and all(adapter.lacks(k) is None for k in c.operations())
         and not (c.overrides.get("torch") and c.overrides["torch"].not_applicable)][:limit]
for case in cases:
    inputs = [s.name for s in case.given]
    outs = sorted(n for n in mentioned(case) if n not in inputs) + [n for n in inputs]
    row = {"case": case.id}
    def fresh():
        torch.manual_seed(0)
        return [adapter.make_input(s, "cpu") for s in case.given]
    # eager
    xs = fresh()
    try:
        with warnings.catch_warnings(): warnings.simplefilter("ignore"); e_out = program(case, outs, inputs)(*xs)
        e_err = None
    except Exception as exc:
        e_out, e_err = None, type(exc).__name__
    e_alias = None if e_out is None else [[a is b for b in xs] for a in e_out]
    e_share = None if e_out is None else [[isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.layout==torch.strided and b.layout==torch.strided and a.untyped_storage().data_ptr()==b.untyped_storage().data_ptr() for b in xs] for a in e_out]
    e_snap = None if e_out is None else snapshot(e_out, xs)
    e_in = snapshot(xs, xs)
    # compiled
    torch._dynamo.reset()
    xs = fresh()
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c_out = torch.compile(program(case, outs, inputs), backend=backend)(*xs)
        c_err = None
    except Exception as exc:
        c_out, c_err = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    row["compile_s"] = time.perf_counter() - t0
    c_alias = None if c_out is None else [[a is b for b in xs] for a in c_out]
    c_share = None if c_out is None else [[isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.layout==torch.strided and b.layout==torch.strided and a.untyped_storage().data_ptr()==b.untyped_storage().data_ptr() for b in xs] for a in c_out]
    c_snap = None if c_out is None else snapshot(c_out, xs)
    c_in = snapshot(xs, xs)
    diffs = []
    if (e_err is None) != (c_err is None): diffs.append(f"error eager={e_err} compiled={c_err}")
    elif e_out is not None:
        if e_alias != c_alias: diffs.append("identity")
        if e_share != c_share: diffs.append("storage sharing")
        for n, a, b in zip(outs, e_snap, c_snap):
            if a[0] == "t" and b[0] == "t":
                if a[2] != b[2] or a[3] != b[3] or not torch.allclose(a[1].double() if not a[1].is_complex() else a[1], b[1].double() if not b[1].is_complex() else b[1], equal_nan=True, rtol=1e-5, atol=1e-6):
                    diffs.append(f"values of {n}")
            elif a[0] != b[0]: diffs.append(f"kind of {n}")
        for s, a, b in zip(inputs, e_in, c_in):
            if a[0] == "t" and b[0] == "t" and (a[3] != b[3] or not torch.allclose(a[1].double() if not a[1].is_complex() else a[1], b[1].double() if not b[1].is_complex() else b[1], equal_nan=True)):
                diffs.append(f"input {s} after the call")
    row["diffs"] = diffs
    row["eager_err"], row["compiled_err"] = e_err, c_err
    results.append(row)
json.dump(results, open(f"/tmp/spike/{backend}.json", "w"), indent=1)
t = [r["compile_s"] for r in results]
print(backend, "items", len(results), "total compile+run s", round(sum(t), 1), "median", round(statistics.median(t), 3))
print("differing", sum(1 for r in results if r["diffs"]))
