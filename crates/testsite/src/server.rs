//! Serving a [`TestWeb`] on loopback: one listener per host on `127.0.0.1:0`, hyper 1 over
//! HTTP/1.1 with keep-alive, and [`RunningWeb`] to inspect and stop it.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue, LOCATION, SERVER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::config::HostKind;
use crate::error::TestSiteError;
use crate::manifest::{HostInfo, Manifest};
use crate::render::robots;
use crate::request_log::RequestLog;
use crate::site::PRIVATE_DIR;
use crate::web::{Reply, TEXT, TestWeb, XML};

/// How long shutdown waits for open connections to finish their response before closing them.
const GRACE: Duration = Duration::from_secs(2);
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// A [`TestWeb`] being served. Dropping it stops the servers (abruptly); [`shutdown`]
/// stops them gracefully.
///
/// [`shutdown`]: RunningWeb::shutdown
pub struct RunningWeb {
    hosts: Vec<HostInfo>,
    addrs: Vec<(HostKind, SocketAddr)>,
    web: Arc<TestWeb>,
    manifest: Manifest,
    log: Arc<RequestLog>,
    /// Set to `true` to stop: accept loops stop accepting, connections close after their
    /// current response.
    shutdown: watch::Sender<bool>,
    /// One accept loop per host; each owns its connections' tasks.
    accept_loops: Vec<JoinHandle<()>>,
}

/// What one host's connections share.
struct HostServer {
    kind: HostKind,
    web: Arc<TestWeb>,
    /// Base URL of every host, for absolute `Location` headers.
    bases: Vec<(HostKind, String)>,
    /// Answers that need this host's absolute URL and so are made here rather than by
    /// [`TestWeb::respond`]: the origin's sitemap and its robots.txt that announces it.
    absolute: Vec<(&'static str, &'static str, Bytes)>,
    log: Arc<RequestLog>,
}

impl TestWeb {
    /// Serves every host of this web on its own port of 127.0.0.1 (chosen by the system, so
    /// tests can run in parallel), on the current tokio runtime.
    ///
    /// ```
    /// use simcrawl_testsite::{HostKind, TestWeb, TestWebConfig};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), simcrawl_testsite::TestSiteError> {
    /// let web = TestWeb::generate(TestWebConfig::small()).serve().await?;
    /// let origin = web.manifest().base(HostKind::Origin).unwrap();
    /// assert!(origin.starts_with("http://127.0.0.1:"));
    /// assert_eq!(web.seeds().len(), 7);
    /// web.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve(self) -> Result<RunningWeb, TestSiteError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(TestSiteError::NoRuntime);
        }
        let mut listeners = Vec::new();
        let first = self.config().address;
        for (i, kind) in self.hosts().collect::<Vec<_>>().into_iter().enumerate() {
            let address = if first == Ipv4Addr::LOCALHOST || !first.is_loopback() {
                Ipv4Addr::LOCALHOST
            } else {
                Ipv4Addr::from(u32::from(first).wrapping_add(i as u32))
            };
            let listener = TcpListener::bind((address, 0))
                .await
                .map_err(|source| TestSiteError::Bind { host: kind, source })?;
            let addr = listener
                .local_addr()
                .map_err(|source| TestSiteError::LocalAddr { host: kind, source })?;
            listeners.push((kind, addr, listener));
        }
        let hosts: Vec<HostInfo> = listeners
            .iter()
            .map(|(kind, addr, _)| HostInfo {
                kind: *kind,
                base: format!("http://{addr}"),
            })
            .collect();
        let bases: Vec<(HostKind, String)> =
            hosts.iter().map(|h| (h.kind, h.base.clone())).collect();
        let manifest = self.manifest_with_bases(|kind| {
            bases
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, b)| b.clone())
                .unwrap_or_default()
        });
        let web = Arc::new(self);
        let log = Arc::new(RequestLog::new(bases.clone()));
        let (shutdown, _) = watch::channel(false);
        let mut addrs = Vec::new();
        let mut accept_loops = Vec::new();
        for (kind, addr, listener) in listeners {
            let base = format!("http://{addr}");
            let absolute = if kind == HostKind::Origin {
                let robots = robots(Some(PRIVATE_DIR), Some(&format!("{base}/sitemap.xml")));
                vec![
                    ("/robots.txt", TEXT, robots),
                    ("/sitemap.xml", XML, web.sitemap(&base)),
                ]
            } else {
                Vec::new()
            };
            let host = Arc::new(HostServer {
                kind,
                web: Arc::clone(&web),
                bases: bases.clone(),
                absolute,
                log: Arc::clone(&log),
            });
            accept_loops.push(tokio::spawn(accept_loop(
                listener,
                host,
                shutdown.subscribe(),
            )));
            addrs.push((kind, addr));
        }
        Ok(RunningWeb {
            hosts,
            addrs,
            web,
            manifest,
            log,
            shutdown,
            accept_loops,
        })
    }
}

impl RunningWeb {
    /// The hosts and their base URLs (`http://127.0.0.1:PORT`), in [`HostKind::ALL`] order.
    pub fn hosts(&self) -> &[HostInfo] {
        &self.hosts
    }

    /// The socket address a host listens on.
    pub fn addr(&self, kind: HostKind) -> Option<SocketAddr> {
        self.addrs.iter().find(|(k, _)| *k == kind).map(|(_, a)| *a)
    }

    /// The absolute URL of `target` (a path starting with `/`) on a host.
    pub fn url(&self, kind: HostKind, target: &str) -> Option<String> {
        self.hosts
            .iter()
            .find(|h| h.kind == kind)
            .map(|h| h.url(target))
    }

    /// The ground truth, with the real base URLs.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The URLs a demo crawl starts from: the root of every host.
    pub fn seeds(&self) -> Vec<String> {
        self.manifest.seeds()
    }

    /// The request log, shared with the servers (it stays readable after shutdown).
    pub fn request_log(&self) -> Arc<RequestLog> {
        Arc::clone(&self.log)
    }

    /// The web being served.
    pub fn web(&self) -> &TestWeb {
        &self.web
    }

    /// Stops gracefully: no new connections; open ones finish the response in flight and
    /// close (idle keep-alive connections close at once), within two seconds at most.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in std::mem::take(&mut self.accept_loops) {
            let _ = task.await;
        }
    }
}

impl std::fmt::Debug for RunningWeb {
    /// The hosts and their addresses (not the pages, nor the manifest).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningWeb")
            .field("hosts", &self.addrs)
            .field("requests", &self.log.total())
            .finish_non_exhaustive()
    }
}

impl Drop for RunningWeb {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        for task in &self.accept_loops {
            task.abort();
        }
    }
}

/// What answers the requests of one listener: a host of the generated web, or of the real-page
/// web.
pub(crate) trait Handler: Send + Sync + 'static {
    /// The response to one request.
    fn handle(&self, request: &Request<Incoming>) -> Response<Full<Bytes>>;
}

/// Accepts connections of one host until shutdown, then drains them.
pub(crate) async fn accept_loop<H: Handler>(
    listener: TcpListener,
    host: Arc<H>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            // A send, or the sender dropped: stop either way.
            _ = shutdown.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, Arc::clone(&host), shutdown.clone()));
                }
                // Out of file descriptors and the like: back off a little, keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
    drop(listener);
    let drain = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(GRACE, drain).await.is_err() {
        connections.abort_all();
    }
}

/// Serves one HTTP/1.1 connection (keep-alive) until the client closes it or shutdown.
async fn serve_connection<H: Handler>(
    stream: TcpStream,
    host: Arc<H>,
    mut shutdown: watch::Receiver<bool>,
) {
    // Small responses on a kept-alive connection: do not wait for Nagle.
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request: Request<Incoming>| {
        let response = host.handle(&request);
        async move { Ok::<_, Infallible>(response) }
    });
    let mut connection = pin!(
        http1::Builder::new()
            .keep_alive(true)
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service)
    );
    tokio::select! {
        _ = connection.as_mut() => {}
        _ = shutdown.changed() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

impl Handler for HostServer {
    fn handle(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let target = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
        let path = request.uri().path();
        let response = if !matches!(*request.method(), Method::GET | Method::HEAD) {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            r
        } else if let Some((_, content_type, body)) =
            self.absolute.iter().find(|(p, _, _)| *p == path)
        {
            self.reply(Reply::Ok {
                content_type,
                body: body.clone(),
            })
        } else {
            self.reply(self.web.respond(self.kind, target))
        };
        self.log
            .record(self.kind, target, response.status().as_u16());
        response
    }
}

impl HostServer {
    fn reply(&self, reply: Reply) -> Response<Full<Bytes>> {
        match reply {
            Reply::Ok { content_type, body } => {
                let mut r = Response::new(Full::new(body));
                r.headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
                r.headers_mut()
                    .insert(SERVER, HeaderValue::from_static("simcrawl-testsite"));
                r
            }
            Reply::Redirect {
                status,
                host,
                target,
            } => {
                let base = self
                    .bases
                    .iter()
                    .find(|(k, _)| *k == host)
                    .map_or("", |(_, b)| b.as_str());
                let location = HeaderValue::from_str(&format!("{base}{target}"));
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::FOUND);
                match location {
                    Ok(location) => {
                        let mut r = plain(status, "moved\n");
                        r.headers_mut().insert(LOCATION, location);
                        r
                    }
                    Err(_) => plain(StatusCode::BAD_REQUEST, "bad request target\n"),
                }
            }
            Reply::NotFound => plain(StatusCode::NOT_FOUND, "not found\n"),
        }
    }
}

pub(crate) fn plain(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut()
        .insert(SERVER, HeaderValue::from_static("simcrawl-testsite"));
    r
}
