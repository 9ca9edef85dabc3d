//! What this process costs: CPU time and resident memory, from the kernel.

use anyhow::{Context, Result};

/// User + system CPU time of this process so far, in seconds.
pub fn cpu_seconds() -> f64 {
    rusage_seconds(libc::RUSAGE_SELF)
}

/// User + system CPU time of the child processes waited for so far, in seconds.
pub fn children_cpu_seconds() -> f64 {
    rusage_seconds(libc::RUSAGE_CHILDREN)
}

fn rusage_seconds(who: libc::c_int) -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete rusage into the pointer it is given, which points to
    // enough zeroed memory for one.
    let ok = unsafe { libc::getrusage(who, usage.as_mut_ptr()) } == 0;
    if !ok {
        return 0.0;
    }
    // SAFETY: getrusage succeeded, so the struct is initialised.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// CPU time of the calling thread so far, in seconds: unlike the wall clock, it does not count
/// the time the thread waited for a core on a shared machine.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer it is given, which points to one.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    if !ok {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// A `kB` line of `/proc/self/status`, in bytes.
pub fn status_bytes(field: &str) -> Result<u64> {
    let status =
        std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .with_context(|| format!("no {field} in /proc/self/status"))?;
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("unreadable line {line:?}"))?;
    Ok(kb * 1024)
}

/// Resident memory of this process now.
pub fn rss_bytes() -> Result<u64> {
    status_bytes("VmRSS:")
}

/// Peak resident memory of this process.
pub fn peak_rss_bytes() -> Result<u64> {
    status_bytes("VmHWM:")
}

/// Bytes of the heap in use now (jemalloc's `stats.allocated`, plus glibc's `mallinfo2` for what
/// C code allocates there). Against the RSS it tells the memory the program holds from what the
/// allocator keeps free and from file-backed pages (tantivy's memory-mapped segments).
pub fn heap_in_use() -> u64 {
    // jemalloc's count of the bytes the program holds (the bench's allocator, as the binary's),
    // read after advancing its statistics' epoch; glibc's malloc holds the C libraries' few.
    let _ = tikv_jemalloc_ctl::epoch::advance();
    let jemalloc = tikv_jemalloc_ctl::stats::allocated::read().unwrap_or(0) as u64;
    // SAFETY: mallinfo2 takes no argument and returns a plain struct by value.
    let info = unsafe { libc::mallinfo2() };
    jemalloc + (info.uordblks + info.hblkhd) as u64
}

/// The `simcrawl` binary next to this one (`cargo build --release` builds both).
pub fn simcrawl_bin() -> Result<std::path::PathBuf> {
    let exe = std::env::current_exe().context("the bench's own path")?;
    let bin = exe.with_file_name("simcrawl");
    if !bin.is_file() {
        anyhow::bail!(
            "{} not found: run `cargo build --release` first",
            bin.display()
        );
    }
    Ok(bin)
}

/// Writes a hostfile of `n` free ports on 127.0.0.1 (one `host:port` per line) to `path`.
pub fn write_hostfile(path: &std::path::Path, n: usize) -> Result<()> {
    let ports: Vec<String> = (0..n)
        .map(|_| {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            Ok(format!("127.0.0.1:{}", l.local_addr()?.port()))
        })
        .collect::<std::io::Result<_>>()?;
    std::fs::write(path, ports.join("\n") + "\n")?;
    Ok(())
}
