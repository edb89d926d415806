"""The Python stages' part of the export report: stage 0 (capture) in the report Rust writes, the
report of a capture that failed, and the Python route for an op without a translation."""

from __future__ import annotations

import pathlib
import platform
from typing import Any


def _versions() -> str:
    from . import _fxonnx

    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"
    return f"fxonnx {_fxonnx.__version__}, torch {torch_version}, Python {platform.python_version()}"


def _mark(ok: bool | None) -> str:
    return "⚪" if ok is None else ("✅" if ok else "❌")


def _capture_lines(capture: Any) -> list[str]:
    from . import _capture

    tried = {a.strategy: a for a in capture.attempts}
    lines = []
    for name, title, _ in _capture.STRATEGIES + [_capture.DRAFT]:
        a = tried.get(name)
        if a is None:
            note = " (not tried: set TORCH_ONNX_ENABLE_DRAFT_EXPORT=1)" if name == _capture.DRAFT[0] else " (not needed)"
            lines.append(f"⚪ {title}{note}")
        else:
            lines.append(f"{_mark(a.success)} {title} ({a.seconds * 1e3:.0f} ms)")
    return lines


def _errors_block(capture: Any) -> str:
    failed = [a for a in capture.attempts if not a.success]
    if not failed:
        return "No errors\n"
    return "\n".join(f"# ⚠️ Errors from strategy '{a.strategy}': -----------------------\n\n{a.formatted_error()}"
                     for a in failed)


def capture_failure_report(artifacts: pathlib.Path, timestamp: str, capture: Any) -> str:
    """The report of a capture every strategy failed: stage 0, every strategy's error, the time
    it took, the versions, and where to go next."""
    from . import _capture

    artifacts.mkdir(parents=True, exist_ok=True)
    path = artifacts / f"fxonnx_export_{timestamp}_capture.md"
    text = [
        "# fxonnx Export Report",
        "",
        "Stage 0 (capture with torch.export) failed: the model never reached the converter.",
        "",
        "```",
        *_capture_lines(capture),
        "⚪ Read the archive",
        "⚪ Resolve the program",
        "⚪ Translate the graph into ONNX",
        "⚪ Optimize the ONNX graph",
        "⚪ Save the model",
        "```",
        "",
        f"Capture time: {capture.seconds * 1e3:.0f} ms. Versions: {_versions()}.",
        "",
        "## Error messages",
        "",
        "```pytb",
        _errors_block(capture),
        "```",
        "",
        "## Next steps",
        "",
        "- `torch.export.draft_export(model, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes)` captures the",
        "  model past data-dependent errors and reports every issue at once (`ep._report`); with",
        "  `TORCH_ONNX_ENABLE_DRAFT_EXPORT=1` the export tries it as a third strategy"
        + (" (it did here)." if _capture.draft_export_enabled() else "."),
        "- https://pytorch.org/docs/stable/generated/exportdb/index.html lists what torch.export supports and",
        "  the rewrites that make a model capturable.",
        "",
    ]
    path.write_text("\n".join(text), encoding="utf-8")
    return str(path)


def add_capture_section(path: Any, capture: Any, exported: Any) -> None:
    """Put stage 0 (capture) into the report Rust wrote, after its status block."""
    if path is None:
        return
    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return
    if capture is None:
        source = "an ExportedProgram (not captured here)" if exported is not None else "a .pt2 archive"
        section = f"\n## Capture (stage 0)\n\nThe program was given as {source}. Versions: {_versions()}.\n"
    else:
        section = (
            "\n## Capture (stage 0)\n\n```\n" + "\n".join(_capture_lines(capture)) + "\n```\n\n"
            f"Captured with `{capture.strategy}` in {capture.seconds * 1e3:.0f} ms. Versions: {_versions()}.\n"
        )
        if any(not a.success for a in capture.attempts):
            section += "\n```pytb\n" + _errors_block(capture) + "```\n"
    marker = "\n## Error messages"
    at = text.find(marker)
    text = text + section if at < 0 else text[:at] + section + text[at:]
    path.write_text(text, encoding="utf-8")


def _skeleton(target: str, key: str, example: Any) -> str:
    """A Python translation to start from, for ``custom_translation_table``."""
    params = "self"
    if example is not None:
        names = []
        for i, a in enumerate(example.args):
            names.append(f"arg{i}")
        params = ", ".join(names) or "self"
    op = target if target.startswith("torch.ops.") else f"torch.ops.{key.replace('::', '.')}"
    return (
        "from onnxscript import opset18 as op\n\n"
        f"def {key.split('::')[-1].split('.')[0]}_onnx({params}):\n"
        f"    # the ONNX for {key}: tensor arguments arrive as ONNX values, scalars as Python values\n"
        "    return op.Identity(arg0)\n\n"
        f"fxonnx.export(model, args, custom_translation_table={{{op}: {key.split('::')[-1].split('.')[0]}_onnx}})\n"
    )


def python_route(e: Any, exported: Any, report_path: Any, source: Any) -> Any:
    """The unsupported-op error with ``node``/``target`` filled and the Python way to add a
    translation (instead of only the Rust macro), also appended to the report."""
    from . import _fxonnx

    missing = []
    try:
        if source is not None:
            missing = _fxonnx.untranslated_ops(source)
    except Exception:
        missing = []
    first = missing[0] if missing else None
    example = None
    if first is not None and exported is not None:
        example = next((n for n in exported.graph.nodes if n.name == first[2][0]), None)
    skeletons = "\n".join(_skeleton(m[0], m[1], example if m is first else None) for m in missing[:3])
    message = str(e)
    if missing:
        message += (
            "\nhint (Python): translate it in Python with custom_translation_table={OpOverload: function}, "
            "the function written with onnxscript ops, as torch.onnx takes it:\n" + skeletons
        )
    new = type(e)(message)
    for k, v in getattr(e, "__dict__", {}).items():
        if not k.startswith("_"):
            setattr(new, k, v)
    if first is not None:
        new.target = first[1]
        new.node = first[2][0] if first[2] else None
        new.hint = f"add a translation of {first[1]} with custom_translation_table (see the message)"
    new.report_path = report_path
    if report_path is not None and missing:
        with open(report_path, "a", encoding="utf-8") as fh:
            fh.write("\n## Python translations to start from\n\n```python\n" + skeletons + "```\n")
    return new
