//! A hand-written HTTP/1.1 server on 127.0.0.1:0, for full control over hostile behaviour.
//!
//! Each route is a closure from the request and its hit number (0 for the first request to that
//! path, query included) to a [`Reply`]; routes match the path without the query. Every response closes its connection. Unknown paths get a 404. The server
//! stops when the [`Server`] is dropped (and with the test's runtime).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What comes after the response head.
pub enum BodySpec {
    /// These bytes.
    Bytes(Vec<u8>),
    /// These pieces, one write each, made only as fast as the client reads; stops at the first
    /// failed write (the client hung up).
    Stream(Box<dyn Iterator<Item = Vec<u8>> + Send>),
    /// Nothing: the connection stays open and silent.
    Stall,
}

/// A response to send.
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: BodySpec,
    /// Content-Length to announce; `None` sends none (the body ends when the connection closes).
    length: Option<u64>,
    /// Send nothing at all, not even the head, and keep the connection open.
    silent: bool,
}

impl Reply {
    /// An empty response with this status.
    pub fn new(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: BodySpec::Bytes(Vec::new()),
            length: Some(0),
            silent: false,
        }
    }

    /// No response at all: the request is read, then silence.
    pub fn silent() -> Reply {
        Reply {
            silent: true,
            ..Reply::new(200)
        }
    }

    /// 200, `text/html`, this body.
    pub fn html(body: impl Into<Vec<u8>>) -> Reply {
        Reply::new(200)
            .header("Content-Type", "text/html")
            .body(body)
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::new(status).header("Location", location)
    }

    /// Sets Content-Type (replacing the one `html` set).
    pub fn content_type(mut self, value: &str) -> Reply {
        self.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
        self.header("Content-Type", value)
    }

    /// Adds a header (repeat it for several lines of the same name).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// A fixed body, with its Content-Length.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Reply {
        let body = body.into();
        self.length = Some(body.len() as u64);
        self.body = BodySpec::Bytes(body);
        self
    }

    /// A streamed body, announcing `length` (or none).
    pub fn stream(
        mut self,
        pieces: impl Iterator<Item = Vec<u8>> + Send + 'static,
        length: Option<u64>,
    ) -> Reply {
        self.length = length;
        self.body = BodySpec::Stream(Box::new(pieces));
        self
    }

    /// The head (announcing `length` bytes), then silence.
    pub fn stall(mut self, length: u64) -> Reply {
        self.length = Some(length);
        self.body = BodySpec::Stall;
        self
    }
}

type Handler = Box<dyn Fn(&Request, usize) -> Reply + Send + Sync>;

/// The routes of a server to start.
#[derive(Default)]
pub struct Routes {
    routes: HashMap<String, Handler>,
}

impl Routes {
    pub fn route(
        mut self,
        path: &str,
        handler: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static,
    ) -> Routes {
        self.routes.insert(path.to_owned(), Box::new(handler));
        self
    }

    /// Binds 127.0.0.1:0 and serves.
    pub async fn start(self) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(State {
            routes: self.routes,
            log: Mutex::new(Vec::new()),
        });
        let serving = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&serving)));
            }
        });
        Server { addr, state, task }
    }
}

struct State {
    routes: HashMap<String, Handler>,
    log: Mutex<Vec<Request>>,
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub fn routes() -> Routes {
        Routes::default()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// `http://<host>:<port><path>`, for a host name pinned to 127.0.0.1 in the fetcher's config.
    pub fn url_as(&self, host: &str, path: &str) -> String {
        format!("http://{}:{}{}", host, self.addr.port(), path)
    }

    /// Requests received for `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.requests().iter().filter(|r| r.path == path).count()
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.log.lock().expect("log lock").clone()
    }
}

async fn serve(mut stream: TcpStream, state: Arc<State>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let hit = {
        let mut log = state.log.lock().expect("log lock");
        let hit = log.iter().filter(|r| r.path == request.path).count();
        log.push(request.clone());
        hit
    };
    let route = request.path.split('?').next().unwrap_or_default();
    let reply = match state.routes.get(route) {
        Some(handler) => handler(&request, hit),
        None => Reply::new(404),
    };
    if reply.silent {
        std::future::pending::<()>().await;
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(length) = reply.length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    match reply.body {
        BodySpec::Bytes(bytes) => {
            let _ = stream.write_all(&bytes).await;
        }
        BodySpec::Stream(pieces) => {
            for piece in pieces {
                if stream.write_all(&piece).await.is_err() {
                    return;
                }
            }
        }
        BodySpec::Stall => {
            std::future::pending::<()>().await;
        }
    }
    let _ = stream.shutdown().await;
}

/// Reads a request head (bodies are not expected: the fetcher only sends GET).
async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Some(Request {
        method,
        path,
        headers,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}
