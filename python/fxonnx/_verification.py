"""What ``ONNXProgram.verify`` returns: each output compared with the program's on each input set."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class OutputComparison:
    """One output on one input set: where the model and the program differ most."""

    input_set: str
    output: str
    shape_matches: bool
    dtype_matches: bool
    max_abs_error: float
    max_rel_error: float
    atol: float
    rtol: float
    passed: bool
    # Why it failed when the values say nothing (the model and the program differ in outputs).
    note: str = ""


@dataclasses.dataclass
class VerificationResult:
    """Every output compared on the example inputs and on inputs of other sizes."""

    comparisons: list[OutputComparison]
    # Input sets not compared, with why: (input set, reason).
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    def markdown(self) -> str:
        rows = [
            "| inputs | output | shape | dtype | max abs error | max rel error | atol | rtol | result |",
            "|---|---|---|---|---:|---:|---:|---:|---|",
        ]
        for c in self.comparisons:
            rows.append(
                f"| {c.input_set} | `{c.output}` | {'ok' if c.shape_matches else 'differs'} "
                f"| {'ok' if c.dtype_matches else 'differs'} | {c.max_abs_error:.3g} | {c.max_rel_error:.3g} "
                f"| {c.atol:g} | {c.rtol:g} | {'pass' if c.passed else 'FAIL'}{': ' + c.note if c.note else ''} |"
            )
        for input_set, why in self.skipped:
            rows.append(f"\nNot compared on the {input_set} inputs: {why}.")
        return "\n".join(rows) + "\n"
