"""PyTorch adapter. The neutral vocabulary follows PyTorch's names, so most methods pass
straight through; torch is imported on first use only."""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any, Callable

from conformance.adapters.base import (
    NUMPY_CONVERSIONS,
    Adapter,
    GlobalState,
    Layout,
    Operation,
    TensorProbes,
    absent,
    attribute,
    attribute_setter,
    attributes_state,
    dtype_named,
    is_device_name,
    passthrough,
)
from conformance.adapters.extent import GROWS_STORAGE, bounded, check, check_growth, contiguous_strides, integer
from conformance.model import DTYPES

METHODS = (
    # in place
    "add_", "sub_", "mul_", "div_", "exp_", "zero_", "fill_", "normal_", "uniform_", "clamp_",
    "relu_", "sigmoid_", "abs_", "neg_", "sqrt_", "copy_", "detach_", "requires_grad_", "t_",
    "transpose_", "resize_", "unsqueeze_", "squeeze_", "masked_fill_",
    # views, copies, reductions, conversions
    "reshape", "transpose", "permute", "t", "flatten", "ravel", "squeeze", "unsqueeze",
    "expand", "diagonal", "split", "chunk", "flip", "clone", "contiguous", "detach", "numpy",
    "cpu", "sum", "index_select", "masked_select", "gather", "item", "tolist", "backward",
    "movedim", "unflatten", "narrow", "unfold", "unbind", "tensor_split", "broadcast_to", "conj",
    "take", "nonzero",
)
# in place, elementwise (issue 18, the in-place surface): unary math, arithmetic, comparison,
# logical and bitwise methods, passed through (add_, sub_, mul_, div_, exp_, clamp_, relu_,
# sigmoid_, abs_, neg_, sqrt_ are in METHODS above)
INPLACE_ELEMENTWISE = (
    "absolute_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_", "deg2rad_", "digamma_",
    "erf_", "erfc_", "erfinv_", "exp2_", "expm1_", "fix_", "floor_", "frac_", "i0_", "lgamma_", "log_", "log10_",
    "log1p_", "log2_", "logit_", "nan_to_num_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_",
    "sgn_", "sign_", "sin_", "sinc_", "sinh_", "square_", "tan_", "tanh_", "trunc_",
    "subtract_", "multiply_", "divide_", "true_divide_", "floor_divide_", "remainder_", "fmod_", "pow_",
    "float_power_", "atan2_", "arctan2_", "hypot_", "copysign_", "ldexp_", "lerp_", "gcd_", "lcm_", "xlogy_",
    "heaviside_", "nextafter_", "clip_", "clamp_min_", "clamp_max_", "polygamma_", "mvlgamma_", "igamma_",
    "igammac_",
    "eq_", "ne_", "not_equal_", "lt_", "less_", "le_", "less_equal_", "gt_", "greater_", "ge_", "greater_equal_",
    "logical_and_", "logical_or_", "logical_xor_", "logical_not_",
    "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_", "bitwise_left_shift_", "bitwise_right_shift_",
)
# issue 18, the in-place surface: the structural in-place methods (indexing and scatter
# writes, fills and random fills, storage and shape changes, matrix accumulations), called as
# written (torch's own names; the vocabulary is torch's)
INPLACE_STRUCTURAL = (
    "index_add_", "index_copy_", "index_fill_", "index_put_", "index_reduce_", "scatter_", "scatter_add_",
    "scatter_reduce_", "masked_scatter_", "put_", "fill_diagonal_", "tril_", "triu_",
    "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "random_",
    "resize_as_", "set_", "cumsum_", "cumprod_", "renorm_",
    "addmm_", "addbmm_", "baddbmm_", "addmv_", "addr_", "addcdiv_", "addcmul_", "conj_physical_",
    "share_memory_",
)
ATTRIBUTES = ("T", "mT", "real", "imag", "shape", "grad", "data", "is_leaf", "requires_grad")


def _torch() -> Any:
    import torch

    return torch


@functools.cache
def _dtypes() -> dict[str, Any]:
    torch = _torch()
    return {name: getattr(torch, name) for name in DTYPES}  # the suite's own names only


def _dtype(name: Any) -> Any:
    """The torch dtype a case names: through the table of the suite's dtypes, never a
    lookup of the case's string on the torch module."""
    return _dtypes()[dtype_named(name)]


def _view(x: Any, *args: Any, **kwargs: Any) -> Any:
    """view(*shape) or view(dtype): a dtype name reinterprets the bytes (Tensor.view(dtype));
    the keywords torch takes (size=, dtype=, a dtype name there too) go on."""
    if len(args) == 1 and isinstance(args[0], str):
        return x.view(_dtype(args[0]), **kwargs)
    if isinstance(kwargs.get("dtype"), str):
        kwargs["dtype"] = _dtype(kwargs["dtype"])
    return x.view(*args, **kwargs)


def _to(x: Any, *args: Any, **kwargs: Any) -> Any:
    """to(dtype) or to(device): 'cpu' / 'cuda[:n]' is a device, anything else a dtype name.
    torch takes no dtype strings (``x.to('float32')`` is "Invalid device string"): a case's
    dtype name, the suite's notation for a dtype, is the torch.dtype of that name, which is
    what a torch user writes (``x.to(torch.float32)``). Every keyword torch takes goes on
    (``copy=``, ``non_blocking=``; ``dtype=`` a dtype name too)."""
    args = tuple(a if not isinstance(a, str) or is_device_name(a) else _dtype(a) for a in args)
    if isinstance(kwargs.get("dtype"), str):
        kwargs["dtype"] = _dtype(kwargs["dtype"])
    return x.to(*args, **kwargs)


_OUT_OF_MEMORY = re.compile(r"DefaultCPUAllocator: can't allocate memory|CUDA out of memory")


class TorchProbes(TensorProbes):
    """The probes for torch tensors (NumPy arrays: ArrayProbes')."""

    def _is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, _torch().Tensor)

    def tensor_to_numpy(self, obj: Any) -> Any:
        t = obj.detach().cpu().resolve_conj().resolve_neg()
        if t.dtype == _torch().bfloat16:
            t = t.float()
        return t.numpy().copy()

    def tensor_dtype_name(self, obj: Any) -> str:
        return str(obj.dtype).removeprefix("torch.")

    def tensor_recorded_base(self, obj: Any) -> Any:
        # Tensor._base: the tensor a view was made from, itself never a view (a view of a view
        # records the first one's base); None where _is_view() is false
        return obj._base

    def tensor_layout(self, obj: Any) -> Layout:
        storage = obj.untyped_storage()
        size = obj.element_size()
        start = storage.data_ptr()
        return Layout(obj.data_ptr(), tuple(obj.shape), tuple(s * size for s in obj.stride()), size,
                      (start, start + storage.nbytes()))

    def tensor_strides_of(self, obj: Any) -> tuple[int, ...] | None:
        if obj.layout != _torch().strided:  # a sparse or mkldnn tensor has no strides (stride() raises)
            return None
        return tuple(int(s) for s in obj.stride())  # in elements

    def tensor_grad(self, obj: Any) -> Any:
        # Reading .grad of a non-leaf warns; that is the probe's read, not a step's
        # behaviour (a step that reads x.grad still records the warning).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return obj.grad

    def tensor_requires_grad(self, obj: Any) -> bool | None:
        return bool(obj.requires_grad)

    def tensor_is_leaf(self, obj: Any) -> bool | None:
        return bool(obj.is_leaf)

    def tensor_version_of(self, obj: Any) -> int | None:
        # an inference tensor (made inside torch.inference_mode()) keeps no version counter:
        # reading it raises "Inference tensors do not track version counter"
        if obj.is_inference():
            return None
        return int(obj._version)

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        with _torch().no_grad():
            obj.fill_(value)

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        torch = _torch()
        with torch.no_grad():
            try:
                obj.copy_(torch.from_numpy(snapshot))
            except RuntimeError:  # internal overlap (expand): write element by element
                for index, value in _ndenumerate(snapshot):
                    obj[index] = value



def _foreach(name: str) -> Any:
    """torch._foreach_<name> (a private name, which a step cannot spell), every argument as
    written."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_torch(), "_foreach_" + name)(*args, **kwargs)
    call.__name__ = "foreach_" + name
    return call

class TorchAdapter(TorchProbes, Adapter):
    name = "torch"
    module = "torch"
    distribution = "torch"
    install_hint = "pip install 'conformance[torch]'"
    title = "PyTorch"
    exception_types = frozenset({  # every exception class it defines (base.Adapter.exception_types)
        "torch.AcceleratorError", "torch.FatalError", "torch.OutOfMemoryError", "torch._C._LinAlgError",
        "torch._export.verifier.SpecViolationError",
        "torch._higher_order_ops.utils.UnsupportedAliasMutationException",
        "torch._library.fake_profile.MissingOpProfile",
        "torch._strobelight.cli_function_profiler.StrobelightCLIProfilerError",
        "torch._subclasses.fake_tensor.DataDependentOutputException",
        "torch._subclasses.fake_tensor.DynamicOutputShapeException",
        "torch._subclasses.fake_tensor.FakeTensorDeviceMismatchError",
        "torch._subclasses.fake_tensor.MetadataMismatchError",
        "torch._subclasses.fake_tensor.UnsupportedFakeTensorException",
        "torch._subclasses.fake_tensor.UnsupportedMutationAliasingException",
        "torch._subclasses.fake_tensor.UnsupportedOperatorException",
        "torch._subclasses.fake_tensor._BypassDispatchCache", "torch._vendor.packaging.version.InvalidVersion",
        "torch.autograd.gradcheck.GradcheckError", "torch.cuda.CudaError", "torch.cuda.DeferredCudaCallError",
        "torch.distributed.DistBackendError", "torch.distributed.DistError", "torch.distributed.DistNetworkError",
        "torch.distributed.DistStoreError", "torch.distributed.QueueEmptyError",
        "torch.fx.experimental.proxy_tensor._ModuleNotInstalledAsSubmoduleError",
        "torch.fx.experimental.unification.multipledispatch.dispatcher.MDNotImplementedError",
        "torch.fx.passes.net_min_base.FxNetMinimizerBadModuleError",
        "torch.fx.passes.net_min_base.FxNetMinimizerResultMismatchError",
        "torch.fx.passes.net_min_base.FxNetMinimizerRunFuncError",
        "torch.fx.passes.splitter_base.FxNetSplitterInternalError", "torch.fx.proxy.TraceError", "torch.jit.Error",
        "torch.jit._trace.TracingCheckError", "torch.jit.frontend.FrontendError",
        "torch.jit.frontend.FrontendTypeError", "torch.jit.frontend.NotSupportedError",
        "torch.jit.frontend.UnsupportedNodeError", "torch.mtia.DeferredMtiaCallError",
        "torch.multiprocessing.spawn.ProcessException", "torch.multiprocessing.spawn.ProcessExitedException",
        "torch.multiprocessing.spawn.ProcessRaisedException", "torch.package.importer.ObjMismatchError",
        "torch.package.importer.ObjNotFoundError", "torch.package.package_exporter.EmptyMatchError",
        "torch.package.package_exporter.PackagingError", "torch.testing._comparison.ErrorMeta",
        "torch.testing._comparison.UnsupportedInputs", "torch.utils.checkpoint.CheckpointError",
        "torch.utils.checkpoint._StopRecomputationError",
    })
    report_rank = 10
    storage_bounds = ("as_strided, as_strided_, as_strided_copy and set_ are checked against the storage "
                      "(untyped_storage().nbytes()) before torch is called, and a resize_as_ that would grow the "
                      "tensor is refused; resize_ allocates what it grows, which the engine marks as memory nobody "
                      "wrote")
    # issue 18: the reductions the structural in-place methods take by name (scatter_'s reduce=,
    # scatter_reduce_'s and index_reduce_'s reduce)
    case_strings = frozenset({"sum", "prod", "mean", "amax", "amin", "add", "multiply"})
    autograd = True
    device_kinds = ("cpu", "cuda")
    dlpack_export = dlpack_import = True
    error_patterns = {
        "inplace_on_leaf": (r"leaf Variable that requires grad is being used in an in-place",),
        "modified_saved_tensor": (r"modified by an inplace operation",),
        "overlapping_write": (r"more than one element of the written-to tensor refers to a single memory",
                              # copy_ / item assignment whose source partly overlaps the destination
                              r"some elements of the input tensor and the written-to tensor refer to a "
                              r"single memory location"),
        "dtype_cast": (r"result type \w+ can't be cast to the desired output type",
                       # the same refusal from the meta function torch.compile traces with
                       r"Promotion of int\.add/sub_\(float\) in in-place ops are not possible",
                       # float_power_ of a float32 receiver: the result is float64 by definition
                       r"the base given to \w+ has dtype \w+ but the operation's result requires dtype \w+"),
        "unsupported_dtype": (r"Got unsupported ScalarType \w+",  # numpy() of a bfloat16 tensor
                              r"is not implemented for tensors with non-complex dtypes"),
        "not_contiguous_view": (r"view size is not compatible with input tensor's size and stride",
                                r"stride\(-1\) must be 1 to view \w+ as \w+",
                                # view(dtype) to a larger dtype: an unaligned start, a 0-d tensor
                                r"storage_offset\(\) must be divisible by \d+ to view",
                                r"self\.dim\(\) cannot be 0 to view \w+ as \w+",
                                r"self\.stride\(\d+\) must be divisible by \d+ to view",
                                # view_as_complex of a last dimension that is not contiguous
                                r"Tensor must have a last dimension with stride 1",
                                # from_numpy of a flipped array: no tensor can share it
                                r"At least one stride in the given numpy array is negative",
                                # view() refused by the meta function torch.compile traces with
                                r"Cannot view a tensor with shape .* and strides .* as a tensor with shape"),
        "no_grad_fn": (r"does not require grad and does not have a grad_fn",),
        "graph_freed": (r"Trying to backward through the graph a second time",),
        "requires_grad_conversion": (r"Can't call numpy\(\) on Tensor that requires grad",
                                     r"Can't export tensors that require gradient"),
        "read_only": (r"not writable", r"read-only"),
        "shape_mismatch": (r"shape '\[.*\]' is invalid for input of size", r"must match the size",
                           r"The expanded size of the tensor", r"Sizes of tensors must match",
                           # view(dtype) across a last dimension it does not divide; vsplit / dsplit /
                           # .H / .mH of a tensor with too few dimensions
                           r"size\(-1\) must be divisible by \d+ to view \w+ as \w+",
                           r"requires a tensor with at least \d+ dimension", r"is only supported on matrices"),
        # recorded by the corpus and none of the kinds (docs/case-format.md, "Error kinds")
        "other": (r"cannot resize variables that require grad", r"Can't detach views in-place",
                  r"you can only change requires_grad flags of leaf variables",
                  r"grad can be implicitly created only for scalar outputs",
                  r"step must be greater than zero",
                  # numpy() and view(dtype) of a lazy conjugate (conj()) or negative (its .imag) view
                  r"Can't call numpy\(\) on Tensor that has (conjugate|negative) bit set",
                  r"is not supported for (conjugate view tensors|tensors with negative bit set)",
                  # a sparse tensor's accessor (indices(), values(), crow_indices(), coalesce()...)
                  # of a dense tensor; pin_memory() on a build without an accelerator
                  r"expected sparse [\w ]*tensor layout but got Strided",
                  r"Cannot access accelerator device when none is available",
                  # inference tensors (made inside torch.inference_mode()) used outside it: written
                  # in place, saved for backward
                  r"Inplace update to inference tensor outside InferenceMode is not allowed",
                  r"Inference tensors cannot be saved for backward",
                  # torch.autograd.grad of an input the outputs do not depend on, without
                  # allow_unused=True (issue 37, the functional form of backward())
                  r"appears to not have been used in the graph",
                  # a view whose extent falls outside its storage (slice_inverse of a copy)
                  r"requiring a storage size of \d+ are out of bounds for storage of size \d+"),
    }

    def load(self) -> None:
        _torch()

    def out_of_memory(self, exc: BaseException) -> bool:
        # torch's CPU allocator raises RuntimeError ("DefaultCPUAllocator: can't allocate
        # memory"); CUDA's raises torch.OutOfMemoryError, a RuntimeError too
        return super().out_of_memory(exc) or isinstance(exc, _torch().OutOfMemoryError) or bool(
            isinstance(exc, RuntimeError) and _OUT_OF_MEMORY.search(str(exc)))

    def device_unavailable(self, device: str) -> str | None:
        if device == "cuda" and not _torch().cuda.is_available():
            return "no CUDA device: torch.cuda.is_available() is False"
        return None

    def global_states(self) -> list[GlobalState]:
        torch = _torch()
        return super().global_states() + [
            GlobalState("torch.grad_enabled", torch.is_grad_enabled, torch.set_grad_enabled),
            GlobalState("torch.anomaly", lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
                        lambda v: torch.set_anomaly_enabled(v[0], v[1])),
            GlobalState("torch.default_dtype", torch.get_default_dtype, torch.set_default_dtype),
            GlobalState("torch.default_device", torch.get_default_device, _set_default_device),
            GlobalState("torch.deterministic_algorithms",
                        lambda: (torch.are_deterministic_algorithms_enabled(),
                                 torch.is_deterministic_algorithms_warn_only_enabled()),
                        lambda v: torch.use_deterministic_algorithms(v[0], warn_only=v[1])),
            GlobalState("torch.float32_matmul_precision", torch.get_float32_matmul_precision,
                        torch.set_float32_matmul_precision),
            GlobalState("torch.num_threads", torch.get_num_threads, torch.set_num_threads),
            attributes_state("torch.printoptions", torch._tensor_str.PRINT_OPTS),
            GlobalState("torch.random", torch.get_rng_state, torch.set_rng_state, always_restore=True),
            # TORCH_WARN_ONCE (c10/util/Exception.h) keeps "already warned" in a static of its
            # C++ call site, which nothing can reset: in one process only the first item to
            # reach a site would see its warning (x.T of a 3-D tensor, from_numpy of a read-only
            # array). With warn_always on, every such site warns on every call, as each would
            # on its first call in a fresh process; the process's own value is written back
            # after the item. The difference from a fresh process: a site reached twice in one
            # item warns both times, not only the first, so an expectation of that warning at
            # the second step would hold here and not in a fresh process (no case asks that).
            # torch reads the flag nowhere else: TORCH_WARN_ONCE is its one reader.
            GlobalState("torch.warn_always", torch.is_warn_always_enabled, torch.set_warn_always,
                        reset=lambda: torch.set_warn_always(True)),
        ]

    def seed(self, seed: int) -> None:
        super().seed(seed)
        torch = _torch()
        # the CPU generator directly: torch.manual_seed also walks every accelerator
        # backend, 60 times slower, on every item
        torch.default_generator.manual_seed(seed)
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.manual_seed_all(seed)

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        torch = _torch()
        t = torch.tensor(array, dtype=_dtype(spec.dtype), device=device)
        if spec.requires_grad:
            t.requires_grad_(True)
        return t

    def operations(self) -> dict[str, Operation]:
        torch = _torch
        ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in METHODS}
        ops.update({"method:" + m: passthrough(m) for m in INPLACE_ELEMENTWISE})  # issue 18, in place
        ops.update({"attr:" + a: attribute(a) for a in ATTRIBUTES})
        ops.update({
            "method:view": _view,
            "method:to": _to,
            "method:astype": absent("torch tensors have no astype(); the counterpart is to(dtype)"),
            "method:scale_": absent("torch has no scale_(); the counterpart is mul_()"),
            # Paddle's other names of elementwise in-place methods (issue 18)
            "method:gammaln_": absent("torch has no gammaln_(); the counterpart is lgamma_()"),
            "method:mod_": absent("torch has no mod_(); the counterpart is remainder_() (floor modulo)"),
            "method:floor_mod_": absent("torch has no floor_mod_(); the counterpart is remainder_()"),
            "method:bitwise_invert_": absent("torch has no bitwise_invert_(); the counterpart is bitwise_not_()"),
            "setattr:requires_grad": attribute_setter("requires_grad"),
            "setattr:data": attribute_setter("data"),
            "block:no_grad": lambda: torch().no_grad(),
            "block:enable_grad": lambda: torch().enable_grad(),
            # torch.inference_mode(): no autograd recording, and the tensors made inside are
            # inference tensors (no version counter, no in-place update or grad outside it)
            "block:inference_mode": lambda: torch().inference_mode(),
            # the functional form of backward() (issue 37): torch.autograd.grad(outputs, inputs),
            # which returns the gradients and leaves .grad alone; every argument and keyword
            # (grad_outputs, retain_graph, create_graph, allow_unused, ...) reaches torch as
            # written, so torch's own refusal of one is the step's error
            "fn:autograd_grad": lambda *args, **kwargs: torch().autograd.grad(*args, **kwargs),
            "fn:add": lambda x, other, *, alpha=1, out=None: torch().add(x, other, alpha=alpha, out=out),
            "fn:mul": lambda x, other, *, out=None: torch().mul(x, other, out=out),
            "fn:exp": lambda x, out=None: torch().exp(x, out=out),
            "fn:abs": lambda x, out=None: torch().abs(x, out=out),
            "fn:abs_": lambda x: torch().abs_(x),
            "method:scale": absent("torch has no Tensor.scale(); the counterpart is mul()"),
            "fn:relu": lambda x, inplace=False: torch().nn.functional.relu(x, inplace=inplace),
            "fn:relu_": lambda x: torch().nn.functional.relu_(x),
            "fn:ReLU": lambda inplace=False: torch().nn.ReLU(inplace=inplace),
            "fn:sigmoid": lambda x, out=None: torch().sigmoid(x, out=out),
            "fn:clamp": lambda x, min=None, max=None, out=None: torch().clamp(x, min, max, out=out),
            "fn:sqrt": lambda x, out=None: torch().sqrt(x, out=out),
            # activations: torch.nn.functional forms (inplace= and the _ forms) and layers
            "fn:leaky_relu": lambda x, negative_slope=0.01, inplace=False: torch().nn.functional.leaky_relu(
                x, negative_slope, inplace=inplace),
            "fn:leaky_relu_": lambda x, negative_slope=0.01: torch().nn.functional.leaky_relu_(x, negative_slope),
            "fn:elu": lambda x, alpha=1.0, inplace=False: torch().nn.functional.elu(x, alpha, inplace=inplace),
            "fn:elu_": lambda x, alpha=1.0, **kwargs: torch().nn.functional.elu_(x, alpha, **kwargs),
            "fn:hardtanh": lambda x, min_val=-1.0, max_val=1.0, inplace=False: torch().nn.functional.hardtanh(
                x, min_val, max_val, inplace=inplace),
            "fn:hardtanh_": lambda x, min_val=-1.0, max_val=1.0: torch().nn.functional.hardtanh_(x, min_val, max_val),
            "fn:dropout": lambda x, p=0.5, training=True, inplace=False: torch().nn.functional.dropout(
                x, p, training=training, inplace=inplace),
            "fn:LeakyReLU": lambda negative_slope=0.01, inplace=False: torch().nn.LeakyReLU(negative_slope, inplace),
            "fn:ELU": lambda alpha=1.0, inplace=False: torch().nn.ELU(alpha, inplace),
            "fn:Hardtanh": lambda min_val=-1.0, max_val=1.0, inplace=False: torch().nn.Hardtanh(
                min_val, max_val, inplace),
            "fn:Dropout": lambda p=0.5, inplace=False: torch().nn.Dropout(p, inplace),
            # issue 38: torch.nn.Parameter(data, requires_grad=True), arguments as written
            "fn:Parameter": lambda *args, **kwargs: torch().nn.Parameter(*args, **kwargs),
            "method:eval": lambda m: _module(m).eval(),
            "method:train": lambda m, mode=True: _module(m).train(mode),
            "call": _call_module,
            "fn:from_numpy": lambda a: torch().from_numpy(a),
            "fn:as_tensor": lambda a, dtype=None, device=None: torch().as_tensor(
                a, dtype=None if dtype is None else _dtype(dtype), device=device),
            "fn:from_dlpack": lambda a, **kwargs: torch().from_dlpack(a, **kwargs),  # device=, copy=
            "fn:view_as_real": lambda x: torch().view_as_real(x),
            "fn:view_as_complex": lambda x: torch().view_as_complex(x),
            "fn:take_along_dim": lambda x, index, dim=None, **kw: torch().take_along_dim(x, index, dim=dim, **kw),
            "fn:tensor": lambda a, dtype=None, device=None, requires_grad=False: torch().tensor(
                a, dtype=None if dtype is None else _dtype(dtype), device=device, requires_grad=requires_grad),
            # keywords (out=) go through to torch as written
            "fn:where": lambda c, *xy, **kw: torch().where(c, *xy, **kw),
            "fn:cat": lambda xs, dim=0, **kw: torch().cat(xs, dim=dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: torch().stack(xs, dim=dim, **kw),
            # without a dtype, torch's default (torch.get_default_dtype(), float32 unless changed)
            "fn:zeros": lambda *s, dtype=None, **kw: torch().zeros(*s, dtype=None if dtype is None else _dtype(dtype),
                                                                   **kw),
            "fn:ones": lambda *s, dtype=None, **kw: torch().ones(*s, dtype=None if dtype is None else _dtype(dtype),
                                                                 **kw),
            "fn:empty": lambda *s, dtype=None, **kw: torch().empty(*s, dtype=None if dtype is None else _dtype(dtype),
                                                                   **kw),
        })
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        # Tensor Views page and test_view_ops.py (issue 18, views-torch): the ops
        # https://docs.pytorch.org/docs/stable/tensor_view.html lists, their in-place forms
        # and the *_copy variants (torch.<view op>_copy, which never share memory)
        ops.update({"method:" + m: passthrough(m) for m in (
            "view_as", "reshape_as", "expand_as", "swapaxes", "swapdims", "select", "adjoint", "hsplit",
            "vsplit", "dsplit", "split_with_sizes", "to_sparse", "to_dense", "indices", "values", "coalesce",
            "swapaxes_", "swapdims_", "narrow_copy")})
        ops.update({"attr:H": attribute("H"), "attr:mH": attribute("mH")})
        # test_view_ops.py facts the corpus lacked (lists): CSR index views, assigning .real / .imag
        ops.update({"method:" + m: passthrough(m) for m in ("to_sparse_csr", "crow_indices", "col_indices")})
        # issue 35: the last views torch's schemas declare that the corpus did not reach: CSC index
        # views (ccol_indices, row_indices) and slice_inverse, a view of its input's storage in
        # another shape (what torch.compile's reinplacing of slice_scatter produces)
        ops.update({"method:" + m: passthrough(m) for m in ("to_sparse_csc", "ccol_indices", "row_indices")})
        ops["fn:slice_inverse"] = lambda *args, **kwargs: torch().slice_inverse(*args, **kwargs)
        # ... and the in-place one: retain_grad(Tensor(a!) self) -> (), which writes the tensor's
        # retains_grad flag, not its data
        ops["method:retain_grad"] = passthrough("retain_grad")
        # issue 38: the _foreach_* family (torch._foreach_add_(tensors, other)), in-place over a
        # list of tensors, which may name one tensor twice or overlap; steps name no '_'-prefixed
        # name, so the spelling drops the underscore, arguments as written
        for name in ("add_", "mul_", "add", "mul"):
            ops["fn:foreach_" + name] = _foreach(name)
        ops.update({"setattr:real": attribute_setter("real"), "setattr:imag": attribute_setter("imag")})
        # NumPy's no-copy contracts (lists): torch.frombuffer shares the buffer's memory
        ops["fn:frombuffer"] = lambda buffer, *, dtype: torch().frombuffer(buffer, dtype=_dtype(dtype))
        for name in ("transpose_copy", "permute_copy", "diagonal_copy", "expand_copy", "view_copy", "t_copy",
                     "unsqueeze_copy", "squeeze_copy", "select_copy", "unbind_copy",
                     "split_copy", "split_with_sizes_copy", "unfold_copy", "detach_copy", "alias_copy",
                     "view_as_real_copy", "values_copy", "indices_copy"):
            ops["fn:" + name] = _torch_fn(name)
        ops.update(NUMPY_CONVERSIONS)
        # issue 18, structural in-place methods (INPLACE_STRUCTURAL), and Paddle's own in-place
        # methods that torch has under no name
        ops.update({"method:" + m: passthrough(m) for m in INPLACE_STRUCTURAL})
        ops.update(_storage_operations())  # bounded by the storage they address (adapters/extent.py)
        ops.update({
            "method:put_along_axis_": absent("torch has no put_along_axis_(); the counterpart is scatter_(dim, "
                                             "index, src) (and scatter_reduce_ for a reduction)"),
            "method:reshape_": absent("torch has no reshape_(); a tensor's shape changes in place only through "
                                      "resize_() (or set_()); reshape() returns a new tensor"),
            "method:flatten_": absent("torch has no flatten_(); the counterpart is x = x.flatten() (a new tensor, "
                                      "or resize_(numel) in place)"),
            "method:cast_": absent("torch has no in-place dtype change (no cast_()); the counterpart is "
                                   "x = x.to(dtype), a new tensor"),
        })
        ops.update(_issue38_operations())
        # issue 35: every view and in-place operator torch's schemas declare, under its own name
        # (conformance/data/contracts/torch.yaml), where the entries above lack it
        ops.update({key: op for key, op in _declared_operations().items() if key not in ops})
        return ops


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about: torch's own, arguments as written."""
    torch = _torch
    return {
        # Tensor.repeat tiles (NumPy's np.tile); NumPy's ndarray.repeat is torch's repeat_interleave
        "method:repeat": passthrough("repeat"),
        "method:masked_fill": passthrough("masked_fill"),
        "fn:tril": lambda *args, **kwargs: torch().tril(*args, **kwargs),
        "fn:triu": lambda *args, **kwargs: torch().triu(*args, **kwargs),
        "fn:slice_scatter": lambda *args, **kwargs: torch().slice_scatter(*args, **kwargs),
        # torch takes no dtype strings: a case's dtype name is the torch.dtype of that name
        "fn:arange": lambda *args, dtype=None, **kwargs: torch().arange(
            *args, dtype=None if dtype is None else _dtype(dtype), **kwargs),
    }


def _traced() -> bool:
    """Whether torch.compile's Dynamo is tracing the call (the torch_compile and torch_inductor
    modes): its tensors are then fake, and reading their storage would break the graph,
    changing what the mode compiles. The storage checks are skipped there: the engine runs
    every case eagerly first, on the same inputs, where each request was checked (and an item
    that asked for memory outside its storage refused before anything compiled). Dynamo
    answers is_compiling() with True while it traces."""
    return bool(_torch().compiler.is_compiling())


def _storage_elements(t: Any) -> int:
    """The elements of ``t``'s dtype its storage holds, counted from the storage's start (where
    a storage offset counts from)."""
    return int(t.untyped_storage().nbytes()) // int(t.element_size())


def _strided_bound(name: str) -> Callable[..., None]:
    """The bound of as_strided / as_strided_ (and torch.as_strided_copy's receiver): the
    elements ``size`` and ``stride`` reach from ``storage_offset`` (the tensor's own when None)
    inside the tensor's storage, checked before torch is called. torch checks that too
    ("setStorage: ... out of bounds for storage of size"); the suite does not leave it to the
    framework. A call without a size or a stride is torch's to refuse."""

    def bound(x: Any, *args: Any, **kwargs: Any) -> None:
        given = dict(zip(("size", "stride", "storage_offset"), args))
        given.update(kwargs)
        if isinstance(x, _torch().Tensor) and "size" in given and "stride" in given and not _traced():
            offset = given.get("storage_offset")
            check(name, given["size"], given["stride"], x.storage_offset() if offset is None else offset,
                  _storage_elements(x))

    return bound


def _as_strided_copy(x: Any, *args: Any, **kwargs: Any) -> Any:
    """torch.as_strided_copy(x, size, stride, storage_offset), arguments as written, bounded as
    as_strided is."""
    _strided_bound("as_strided_copy")(x, *args, **kwargs)
    return _torch().as_strided_copy(x, *args, **kwargs)


def _set_bound(x: Any, *args: Any, **kwargs: Any) -> None:
    """The bound of Tensor.set_: set_(source, storage_offset, size, stride) makes x a view of
    ``size`` and ``stride`` (contiguous when not given or empty) starting ``storage_offset``
    elements of x's dtype after the source's own storage offset (measured on 2.13: set_(s[2:],
    0, [2]) starts at element 2 of s's storage; an int8 source's offset 4 counts as 4 float32
    elements of x), inside the source's storage. torch grows a resizable storage to fit a view
    past its end, with memory nobody wrote. set_() and set_(source) alone (the source's own
    view) address nothing new."""
    torch = _torch()
    given = dict(zip(("source", "storage_offset", "size", "stride"), args))
    given.update(kwargs)
    source, size, stride = given.get("source"), given.get("size"), given.get("stride")
    if isinstance(x, torch.Tensor) and isinstance(source, torch.Tensor) and size is not None and not _traced():
        if isinstance(size, (list, tuple)) and (stride is None or (isinstance(stride, (list, tuple)) and not stride)):
            stride = contiguous_strides(size)  # torch's default for an absent or empty stride
        offset = integer("set_", given.get("storage_offset", 0), "offset")
        start = int(source.storage_offset()) + offset
        check("set_", size, stride, start, int(source.untyped_storage().nbytes()) // int(x.element_size()),
              GROWS_STORAGE.format(framework="torch"),
              "" if start == offset else f" (the source's storage offset {start - offset} + {offset})")


def _resize_as_bound(x: Any, other: Any = None, *args: Any, **kwargs: Any) -> None:
    """The bound of Tensor.resize_as_(other): refused where it would grow x, whose new elements
    hold memory nobody wrote (torch grows the storage to fit, as resize_ does), which the engine
    marks for resize_ (limits.UNINITIALISED_WHEN_GROWN) but not for resize_as_."""
    torch = _torch()
    if isinstance(x, torch.Tensor) and isinstance(other, torch.Tensor) and not _traced():
        check_growth("resize_as_", list(other.shape), x.numel(), "torch")


def _storage_operations() -> dict[str, Operation]:
    """The operations that address memory by a case's numbers or adopt another tensor's
    storage (extent.ADDRESSING): torch's own, arguments as written, each bounded by the storage
    it addresses before torch is called. resize_ is torch's own, unbounded: it allocates what
    it grows, and the engine marks the new elements as memory nobody wrote."""
    return {
        "method:as_strided": passthrough("as_strided", _strided_bound("as_strided")),
        "method:as_strided_": passthrough("as_strided_", _strided_bound("as_strided_")),
        "fn:as_strided_copy": bounded(_as_strided_copy),
        "method:set_": passthrough("set_", _set_bound),
        "method:resize_as_": passthrough("resize_as_", _resize_as_bound),
    }


def _declared_operations() -> dict[str, Operation]:
    """The vocabulary keys of torch's declared contracts (conformance.declared), each calling the
    spelling it is named after, arguments as written: ``method:NAME`` the method, ``fn:NAME``
    torch.NAME, else torch.linalg / special / fft's function of the operator (an out= variant:
    ``fn:linalg_cholesky`` is torch.linalg.cholesky), else torch.nn.functional.NAME (``celu_``,
    ``threshold_``). An out= variant is its function's entry, called with ``out=``."""
    from conformance.declared import NAMESPACES, packaged

    ops: dict[str, Operation] = {}
    for contract in packaged().operators:
        for key in contract.keys:
            kind, _, name = key.partition(":")
            if kind == "method":
                ops[key] = passthrough(name)
            elif kind == "fn" and f"torch.{name}" in contract.spellings:
                ops[key] = _torch_fn(name)
            elif kind == "fn":
                prefix = name.split("_", 1)[0]
                namespaced = prefix in NAMESPACES and f"torch.{prefix}.{name[len(prefix) + 1:]}" in contract.spellings
                ops[key] = _namespaced(prefix, name[len(prefix) + 1:]) if namespaced else _functional(name)
    return ops


def _namespaced(module: str, name: str) -> Operation:
    """torch.<module>.<name>(*args, **kwargs) (torch.linalg, torch.special, torch.fft), looked up
    when called."""
    return lambda *args, **kwargs: getattr(getattr(_torch(), module), name)(*args, **kwargs)


def _functional(name: str) -> Operation:
    """torch.nn.functional.<name>(*args, **kwargs), looked up when called."""
    return lambda *args, **kwargs: getattr(_torch().nn.functional, name)(*args, **kwargs)


def _torch_fn(name: str) -> Operation:
    """torch.<name>(*args, **kwargs), looked up when called (torch imported lazily)."""
    return lambda *args, **kwargs: getattr(_torch(), name)(*args, **kwargs)


def _set_default_device(device: Any) -> None:
    # CPU is the default without a device mode; set_default_device("cpu") would install a
    # mode that every later torch call goes through
    _torch().set_default_device(None if device.type == "cpu" else device)


def _ndenumerate(array: Any) -> Any:
    import numpy

    return ((index, value.item()) for index, value in numpy.ndenumerate(array))


def _module(module: Any, what: str = "switched between train and eval mode") -> Any:
    """The layer itself; anything else is refused (a tensor has no eval() / train())."""
    if not isinstance(module, _torch().nn.Module):
        raise TypeError(f"only layers can be {what}, not {type(module).__name__}")
    return module


def _call_module(module: Any, *args: Any, **kwargs: Any) -> Any:
    return _module(module, "called")(*args, **kwargs)


def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): the counterparts of NumPy's documented views. torch's fliplr,
    flipud, rot90 and diag copy (torch has no negative strides); broadcast_tensors is a view."""
    torch = _torch
    return {
        "method:fliplr": passthrough("fliplr"),
        "method:flipud": passthrough("flipud"),
        "method:rot90": lambda x, k=1, dims=(0, 1): x.rot90(k, list(dims)),
        "method:rollaxis": absent("torch has no rollaxis(); the counterpart is movedim(axis, start)"),
        "fn:broadcast_arrays": lambda *xs: torch().broadcast_tensors(*xs),
        "fn:atleast_1d": lambda *xs: torch().atleast_1d(*xs),
        "fn:atleast_2d": lambda *xs: torch().atleast_2d(*xs),
        "fn:atleast_3d": lambda *xs: torch().atleast_3d(*xs),
        "fn:diag": lambda x, diagonal=0, **kw: torch().diag(x, diagonal, **kw),
        # NumPy documents meshgrid(copy=False) and einsum's results as views
        "fn:meshgrid": lambda *xs, **kw: torch().meshgrid(*xs, **kw),
        "fn:einsum": lambda equation, *xs: torch().einsum(equation, *xs),
        "method:getfield": absent("torch has no getfield(); the counterpart is view(dtype) and a slice of the "
                                  "reinterpreted last dimension"),
    }
