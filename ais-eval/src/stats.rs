//! Pass rates and their confidence intervals.

/// The two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `passed` successes in `n` trials at the confidence of `z`
/// (`Z95` for 95%): `(low, high)`, both in `[0, 1]`. No trials: `(0, 1)`, nothing is known.
///
/// ```
/// let (low, high) = ais_eval::stats::wilson(7, 10, ais_eval::stats::Z95);
/// assert!((low - 0.3968).abs() < 1e-4 && (high - 0.8922).abs() < 1e-4);
/// ```
pub fn wilson(passed: u32, n: u32, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = f64::from(n);
    let p = f64::from(passed.min(n as u32)) / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((center - half).max(0.0), (center + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_hold_at_the_edges() {
        let (l, h) = wilson(0, 10, Z95);
        assert_eq!(l, 0.0);
        assert!((h - 0.2775).abs() < 1e-4, "{h}");
        let (l, h) = wilson(10, 10, Z95);
        assert!((l - 0.7225).abs() < 1e-4, "{l}");
        assert!((h - 1.0).abs() < 1e-12);
        let (l, h) = wilson(1, 1, Z95);
        assert!((l - 0.2065).abs() < 1e-4 && h == 1.0, "{l}");
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }
}
