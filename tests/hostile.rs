//! Servers that misbehave. Each scenario is served on 127.0.0.1 by a small thread of the test's
//! own; the crawl must finish with a clear outcome, never a panic.

use crate::util::{Dir, crawl};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::thread;

/// Serves `answer(path)` for every request, each connection on its own thread, until the test
/// ends. Every answer closes its connection.
pub fn serve(answer: fn(&str) -> String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("a clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(n) if n > 2 => continue,
                        _ => break,
                    }
                }
                let _ = stream.write_all(answer(&path).as_bytes());
                let _ = stream.flush();
                let _ = stream.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    base
}

/// A `Retry-After` of 10^23 seconds overflowed the clock (`now + delay`: "overflow when adding
/// duration to instant"); the host now waits at most 10 minutes, and the next run of the store
/// resumes without a panic too.
#[test]
fn an_absurd_retry_after_is_capped_in_this_run_and_the_next() {
    let base = serve(|path| {
        if path == "/robots.txt" {
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
        } else {
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 100000000000000000000000\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy".to_string()
        }
    });
    let dir = Dir::new();
    for run in 0..2 {
        let seeds = if run == 0 {
            vec![format!("{base}/")]
        } else {
            Vec::new()
        };
        let out = crawl(&dir.store(), &seeds, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "run {run} panicked: {stderr}");
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "run {run}: {:?}\n{stderr}",
            out.status
        );
        if run == 0 {
            assert!(
                stdout.contains("frontier.hosts.deferred            1"),
                "{stdout}"
            );
        }
    }
}
