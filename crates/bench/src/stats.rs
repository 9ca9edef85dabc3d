//! Summaries of timing samples.

use std::time::Duration;

/// Median, mean and the 99th percentile of a set of durations, in microseconds.
pub struct Summary {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

pub fn summarise(samples: &mut [Duration]) -> Summary {
    samples.sort_unstable();
    let n = samples.len().max(1);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean_us = samples.iter().map(|&d| us(d)).sum::<f64>() / n as f64;
    let at = |q: f64| {
        samples
            .get(((samples.len() as f64 - 1.0) * q).round() as usize)
            .map_or(0.0, |&d| us(d))
    };
    Summary {
        mean_us,
        p50_us: at(0.5),
        p99_us: at(0.99),
    }
}

/// The median of some numbers.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return 0.0;
    }
    values[values.len() / 2]
}

/// Rounds for JSON output: three significant decimals are plenty for noisy timings.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
