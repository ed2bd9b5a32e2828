//! Timing loops: warm-up, then one wall-clock sample per iteration on a
//! monotonic clock, in milliseconds.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Result;

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `n` samples of `f`, after `warmup` unrecorded calls.
pub fn time_n(n: usize, warmup: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        f()?;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f()?;
        out.push(ms(t.elapsed()));
    }
    Ok(out)
}

/// The async twin of [`time_n`].
pub async fn time_n_async<F, Fut>(n: usize, warmup: usize, mut f: F) -> Result<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<()>>,
{
    for _ in 0..warmup {
        f().await?;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await?;
        out.push(ms(t.elapsed()));
    }
    Ok(out)
}

/// `n` samples where `f` times itself (returns its own figure), after
/// `warmup` unrecorded calls: for measurements that exclude set-up.
pub fn sample_n(n: usize, warmup: usize, mut f: impl FnMut() -> Result<f64>) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        f()?;
    }
    (0..n).map(|_| f()).collect()
}
