"""Statistics for comparing repeats of one configuration: Mann-Whitney U, and what it can show.

The repeats of a test (`repeat: N` in a suite) are independent samples of its figures. Two configurations
differ significantly when a two-sided Mann-Whitney U test on those samples gives p < ALPHA. The test makes no
assumption about the distribution, but it has a floor: with n and m samples the smallest p it can give is
2 / C(n+m, n) (every sample of one side beats every sample of the other). With 3 per side that floor is 0.1, so
no difference can ever be significant at 0.05; 4 per side reach 0.029.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

ALPHA = 0.05


def min_p(n: int, m: int) -> float:
    """The smallest two-sided p-value a Mann-Whitney U test of n against m samples can give."""
    if n < 1 or m < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(n + m, n))


def repeats_needed(alpha: float = ALPHA) -> int:
    """Repeats per side needed before a difference can be significant at `alpha` (4 at 0.05)."""
    n = 1
    while min_p(n, n) >= alpha:
        n += 1
    return n


def order(a: Sequence[float], b: Sequence[float]) -> str | None:
    """"below" when every value of b is below every value of a, "above" when above (complete separation: the most
    a rank test can see, p = min_p), None when they overlap or a side has fewer than 2 values (one against one
    always separates and says nothing)."""
    if len(a) < 2 or len(b) < 2:
        return None
    if max(b) < min(a):
        return "below"
    if min(b) > max(a):
        return "above"
    return None


@dataclass(frozen=True)
class Significance:
    p: float | None             # None: too few samples for the test to ever reach alpha
    significant: bool
    n_a: int
    n_b: int
    needed: int                 # repeats per side that could reach alpha
    p_value: float | None = None    # the test's p whatever its floor (None: one value a side, nothing to rank)
    floor: float = 1.0              # min_p(n_a, n_b): the smallest p these repeats can give (the test's power)
    order: str | None = None        # "below"/"above": every value of B below/above every value of A

    def text(self) -> str:
        """`p=0.008` when significant, `~` otherwise (not significant, or too few repeats to tell)."""
        return f"p={self.p:.3g}" if self.significant and self.p is not None else "~"

    def shown(self) -> str:
        """What compare prints beside a row: `p=0.008` when significant, else `~` with the p the repeats gave
        (`~ p=0.1`), so that a p at the test's floor is seen; `~` alone when there is no p (one value a side)."""
        if self.significant and self.p is not None:
            return self.text()
        return f"~ p={self.p_value:.2g}" if self.p_value is not None else "~"

    def separation(self, b: str = "B", a: str = "A") -> str:
        """"all 3 B < all 3 A" for complete separation, "overlap" where the repeats overlap, "-" where a side has
        one value."""
        if self.order is not None:
            return f"all {self.n_b} {b} {'<' if self.order == 'below' else '>'} all {self.n_a} {a}"
        return "overlap" if min(self.n_a, self.n_b) >= 2 else "-"

    def why(self) -> str:
        if self.p is None:
            return f"needs ≥{self.needed} repeats per side (has {self.n_a} and {self.n_b})"
        return f"p={self.p:.3g}"


def mann_whitney(a: Sequence[float], b: Sequence[float], alpha: float = ALPHA) -> Significance:
    """Two-sided Mann-Whitney U of a against b (scipy's exact distribution for small samples); `p` is None when the
    samples are too few to ever reach alpha, `p_value` the test's p all the same."""
    from scipy.stats import mannwhitneyu

    n_a, n_b = len(a), len(b)
    needed = repeats_needed(alpha)
    floor = min_p(n_a, n_b)
    seen = order(a, b)
    if n_a < 1 or n_b < 1 or floor >= 1.0:     # one value a side: nothing to rank
        p_value: float | None = None
    elif len(set(a) | set(b)) == 1:             # every value equal: nothing differs (scipy would warn)
        p_value = 1.0
    else:
        p_value = float(mannwhitneyu(list(a), list(b), alternative="two-sided").pvalue)
    if floor >= alpha:
        return Significance(None, False, n_a, n_b, needed, p_value, floor, seen)
    p = p_value if p_value is not None else 1.0
    return Significance(p, p < alpha, n_a, n_b, needed, p_value, floor, seen)


def geomean(values: Sequence[float]) -> float | None:
    """Geometric mean of positive values (ratios); None when there is none."""
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def median(values: Sequence[float]) -> float:
    """The one statistic that stands for a configuration's repeats in every view (the verdict, compare, history):
    the middle value, and of an even count the lower of the two middle ones. So it is always one real repeat's
    figure, and that repeat's ceiling, efficiency and reason describe it without restating anything."""
    return statistics.median_low(values)
