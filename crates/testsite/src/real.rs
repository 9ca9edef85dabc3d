//! The real-page web: directories of real HTML (Debian documentation packages, or the slice
//! checked in under `tests/realweb/`) served on loopback through the same host roles as the
//! generated web, so that every verdict can be measured on pages nobody here wrote.
//!
//! [`CORPUS`] lists the manuals and the hosts in front of each: twenty-six manuals from twenty-two
//! page generators (Sphinx: Django, CMake, Clang 15 and 16; Doxygen and DocBook: libstdc++;
//! Doxygen: SDL2; DocBook XSL: PostgreSQL 15; javadoc: OpenJDK 17; rustdoc and mdBook: Rust;
//! asciidoc: Git; gtk-doc: GLib; RDoc: RubyMail; BoostBook: Boost 1.74 and 1.81; SQLite's own;
//! Texinfo: GNU Octave; MkDocs; gi-docgen: Pango; vim2html: Vim's help; texi2html: Zsh; Node.js's
//! doctool: its API; QDoc: Qt Network; YARD: Asciidoctor's API; libxml2's own XSLT site;
//! erl_docgen: Erlang/OTP; Scribble: Racket). The copy roles sit over several of them:
//! Django behind an **origin**, an **exact mirror**, a **prefix mirror** (the same files under
//! [`REAL_MIRROR_PREFIX`]), a **noisy** copy that injects ads, timestamps and session ids into
//! every response, a **tracking** copy whose every link carries `utm_*` parameters, a **session**
//! copy whose every link carries a fresh `sessionid`, and an **alias** that redirects every path
//! to its manual's origin; CMake behind an exact mirror and a noisy copy; libstdc++ behind a noisy
//! copy and a **notice** copy (one sentence, [`MIRROR_NOTICE`], right after the body's start tag
//! of every page); OpenJDK behind a prefix mirror; Rust behind an alias and a tracking copy; Git
//! behind a notice copy and a session copy; GLib behind an exact mirror; RubyMail behind a notice
//! copy; Vim and libxml2 behind a noisy copy; Zsh behind a notice copy and an exact mirror; Node.js
//! behind an alias; Qt Network behind a prefix mirror and a tracking copy; Asciidoctor's API
//! behind a notice copy; Erlang/OTP behind a noisy copy; Racket behind a notice copy. Clang 15 and 16 and Boost 1.74 and 1.81 are two versions of one manual each, on a host
//! per version; SQLite's manual has one host. A **hub** host serves one seed page that links to
//! the start page of every other host.
//!
//! The noise and the session ids are fresh in every response and the same in every run (the
//! `i`-th response to a URL is the same whatever the order of the requests), so that two crawls
//! see the same pages.
//!
//! The largest packages are **sampled** ([`Sample`]): only a bounded, deterministic subset of
//! their HTML files is served (the start page, some listed pages, and in each listed directory
//! its `index.html` and its first N HTML files in sorted order); a link to any other HTML file of
//! the package answers 404, as a broken link does.
//!
//! The server does not decide what is a copy of what: the files do. A URL shows the file at its
//! path under its host's manual root (after the host's prefix), whatever its query; the truth
//! script (`scripts/realweb_truth.py`) reads [`RunningRealWeb::describe`] (which lists a sampled
//! manual's files) and the files.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue, LOCATION, SERVER};
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::TestSiteError;
use crate::rng::mix;
use crate::server::{Handler, accept_loop, plain};
use crate::time::format_utc;

/// The path prefix under which the prefix mirror serves its manual.
pub const REAL_MIRROR_PREFIX: &str = "/mirror";

/// The sentence a [`RealRole::Notice`] host inserts right after the body's start tag of every
/// page.
pub const MIRROR_NOTICE: &str =
    "This documentation is mirrored for offline reading; see the original site for updates.";

/// One manual: a directory of HTML files and the page a reader starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manual {
    /// A short name (`django`, `clang15`, ...).
    pub name: String,
    /// The directory its files are in.
    pub root: PathBuf,
    /// The start page, relative to `root`.
    pub start: String,
    /// For a sampled manual, the only HTML files served (paths relative to `root`, `/`
    /// separated); any other HTML file answers 404. None: every file is served.
    pub only: Option<Arc<BTreeSet<String>>>,
}

impl Manual {
    /// A manual whose every file is served; its start page must exist.
    pub fn new(name: &str, root: PathBuf, start: &str) -> Result<Manual, TestSiteError> {
        if !root.join(start).is_file() {
            return Err(TestSiteError::MissingManual {
                name: name.to_string(),
                root,
                start: start.to_string(),
            });
        }
        Ok(Manual {
            name: name.to_string(),
            root,
            start: start.to_string(),
            only: None,
        })
    }

    /// The same manual with only `sample`'s HTML files served.
    pub fn sampled(mut self, sample: &Sample) -> Result<Manual, TestSiteError> {
        self.only = Some(Arc::new(sample.files(&self)?));
        Ok(self)
    }

    /// Whether the HTML file at `rel` (relative to the root) is served.
    fn serves(&self, rel: &Path) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| rel.to_str().is_some_and(|r| only.contains(r)))
    }
}

/// Which HTML files of a large manual are served: the start page, `pages`, and for each
/// `(dir, from, n)` of `dirs` the directory's `index.html` (when it has one) and the first `n` of
/// its HTML files whose names sort at or after `from`, in sorted order (the directory's own
/// files; subdirectories are not entered). The same files on every machine: the rule reads
/// nothing but the names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Pages served whatever the directories give (paths relative to the manual's root).
    pub pages: &'static [&'static str],
    /// Directories (relative to the root, `""` for the root itself), the name their files start
    /// from (`""`: the first) and how many HTML files of each.
    pub dirs: &'static [(&'static str, &'static str, usize)],
}

impl Sample {
    /// The files this sample takes from `manual` (relative paths, `/` separated).
    pub fn files(&self, manual: &Manual) -> Result<BTreeSet<String>, TestSiteError> {
        let exists = |rel: &str| manual.root.join(rel).is_file();
        let mut files: BTreeSet<String> = std::iter::once(manual.start.as_str())
            .chain(self.pages.iter().copied())
            .filter(|rel| exists(rel))
            .map(str::to_string)
            .collect();
        for (dir, from, n) in self.dirs {
            let path = manual.root.join(dir);
            let entries = std::fs::read_dir(&path).map_err(|source| TestSiteError::SampleDir {
                name: manual.name.clone(),
                dir: path.clone(),
                source,
            })?;
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.ends_with(".html") || name.ends_with(".htm"))
                .collect();
            names.sort();
            let rel = |name: &str| {
                if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                }
            };
            if names.iter().any(|name| name == "index.html") {
                files.insert(rel("index.html"));
            }
            files.extend(
                names
                    .iter()
                    .filter(|name| name.as_str() >= *from)
                    .take(*n)
                    .map(|name| rel(name)),
            );
        }
        Ok(files)
    }
}

/// What a host of the real-page web does with its manual.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RealRole {
    /// Serves the seed page linking to every other host's start page.
    Hub,
    /// Serves the manual's files as they are.
    Origin,
    /// The same files at the same paths.
    ExactMirror,
    /// The same files under [`REAL_MIRROR_PREFIX`].
    PrefixMirror,
    /// The same files with fresh ads, a timestamp and a session id in every response.
    Noisy,
    /// The same files, every link carrying `utm_*` parameters.
    Tracking,
    /// The same files, every link carrying a `sessionid` fresh in every response.
    Session,
    /// Every path redirects (301) to the same path on its manual's origin.
    Alias,
    /// The same files with one sentence, [`MIRROR_NOTICE`], right after the body's start tag.
    Notice,
    /// One version of a manual that has another version on another host.
    Version,
    /// A manual that shares nothing with the others.
    Unrelated,
}

impl RealRole {
    /// The role's name in [`RunningRealWeb::describe`].
    pub fn as_str(self) -> &'static str {
        match self {
            RealRole::Hub => "hub",
            RealRole::Origin => "origin",
            RealRole::ExactMirror => "exact-mirror",
            RealRole::PrefixMirror => "prefix-mirror",
            RealRole::Noisy => "noisy",
            RealRole::Tracking => "tracking",
            RealRole::Session => "session",
            RealRole::Alias => "alias",
            RealRole::Notice => "notice",
            RealRole::Version => "version",
            RealRole::Unrelated => "unrelated",
        }
    }
}

/// One host of the real-page web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealHost {
    /// The host's name (`origin`, `v15`, ...), unique in the web.
    pub name: String,
    /// What it serves.
    pub role: RealRole,
    /// The manual it serves (none for the hub).
    pub manual: Option<String>,
}

impl RealHost {
    fn prefix(&self) -> &'static str {
        if self.role == RealRole::PrefixMirror {
            REAL_MIRROR_PREFIX
        } else {
            ""
        }
    }
}

/// One manual of the real-page corpus: where its package puts it, and the hosts that serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusManual {
    /// The manual's name, and its directory in the checked-in slice.
    pub name: &'static str,
    /// The page generator that wrote it.
    pub generator: &'static str,
    /// The Debian package (`scripts/realweb-fetch.sh` unpacks it under the cache).
    pub package: &'static str,
    /// The manual's root inside the unpacked package.
    pub dir: &'static str,
    /// The start page, relative to the root (the same in the slice).
    pub start: &'static str,
    /// For a package too large to serve whole, the files served from it.
    pub sample: Option<Sample>,
    /// The hosts that serve it: name and role.
    pub hosts: &'static [(&'static str, RealRole)],
}

/// The real-page corpus: each manual and the hosts in front of it, in the order they are served.
pub const CORPUS: &[CorpusManual] = &[
    CorpusManual {
        name: "django",
        generator: "Sphinx",
        package: "python-django-doc",
        dir: "usr/share/doc/python-django-doc/html",
        start: "index.html",
        sample: None,
        hosts: &[
            ("origin", RealRole::Origin),
            ("exact", RealRole::ExactMirror),
            ("prefix", RealRole::PrefixMirror),
            ("noisy", RealRole::Noisy),
            ("tracking", RealRole::Tracking),
            ("session", RealRole::Session),
            ("alias", RealRole::Alias),
        ],
    },
    CorpusManual {
        name: "clang15",
        generator: "Sphinx",
        package: "clang-15-doc",
        dir: "usr/share/doc/clang-15/html",
        start: "index.html",
        sample: None,
        hosts: &[("old", RealRole::Version)],
    },
    CorpusManual {
        name: "clang16",
        generator: "Sphinx",
        package: "clang-16-doc",
        dir: "usr/share/doc/clang-16/html",
        start: "index.html",
        sample: None,
        hosts: &[("new", RealRole::Version)],
    },
    CorpusManual {
        name: "sqlite",
        generator: "SQLite's own",
        package: "sqlite3-doc",
        dir: "usr/share/doc/sqlite3",
        start: "index.html",
        sample: None,
        hosts: &[("other", RealRole::Unrelated)],
    },
    CorpusManual {
        name: "cmake",
        generator: "Sphinx",
        package: "cmake-doc",
        dir: "usr/share/doc/cmake-data/html",
        start: "index.html",
        sample: None,
        hosts: &[
            ("cmake", RealRole::Origin),
            ("cmake-exact", RealRole::ExactMirror),
            ("cmake-noisy", RealRole::Noisy),
        ],
    },
    CorpusManual {
        name: "libstdcxx",
        generator: "Doxygen, DocBook",
        package: "libstdc++-12-doc",
        dir: "usr/share/doc/gcc-12-base/libstdc++",
        start: "index.html",
        sample: Some(Sample {
            pages: &[
                "api.html",
                "user/index.html",
                "user/files.html",
                "user/annotated.html",
                "user/namespaces.html",
                "user/modules.html",
            ],
            // The file pages first, then the group pages (`modules.html` links them).
            dirs: &[
                ("manual", "", 120),
                ("user", "", 500),
                ("user", "a01561.html", 100),
            ],
        }),
        hosts: &[
            ("libstdcxx", RealRole::Origin),
            ("libstdcxx-noisy", RealRole::Noisy),
            ("libstdcxx-notice", RealRole::Notice),
        ],
    },
    CorpusManual {
        name: "openjdk",
        generator: "javadoc",
        package: "openjdk-17-doc",
        dir: "usr/share/doc/openjdk-17-jre-headless/api",
        start: "index.html",
        sample: Some(Sample {
            pages: &["java.base/module-summary.html", "allpackages-index.html"],
            dirs: &[
                ("java.base/java/util", "", 150),
                ("java.base/java/util/class-use", "", 150),
                ("java.base/java/util/function", "", 60),
                ("java.base/java/util/function/class-use", "", 60),
            ],
        }),
        hosts: &[
            ("openjdk", RealRole::Origin),
            ("openjdk-prefix", RealRole::PrefixMirror),
        ],
    },
    CorpusManual {
        name: "rust",
        generator: "rustdoc, mdBook",
        package: "rust-doc",
        dir: "usr/share/doc/rust-doc/html",
        start: "index.html",
        sample: Some(Sample {
            pages: &[
                "std/index.html",
                "core/index.html",
                "core/arch/index.html",
                "std/arch/index.html",
                "unstable-book/language-features.html",
                "unstable-book/library-features.html",
            ],
            dirs: &[
                ("std/collections", "", 100),
                ("core/arch/x86_64", "", 200),
                ("unstable-book", "", 20),
                ("unstable-book/language-features", "", 120),
                ("unstable-book/library-features", "", 80),
                ("book", "", 100),
            ],
        }),
        hosts: &[
            ("rust", RealRole::Origin),
            ("rust-alias", RealRole::Alias),
            ("rust-tracking", RealRole::Tracking),
        ],
    },
    CorpusManual {
        name: "git",
        generator: "asciidoc",
        package: "git-doc",
        dir: "usr/share/doc/git-doc",
        start: "git.html",
        sample: None,
        hosts: &[
            ("git", RealRole::Origin),
            ("git-notice", RealRole::Notice),
            ("git-session", RealRole::Session),
        ],
    },
    CorpusManual {
        name: "glib",
        generator: "gtk-doc",
        package: "libglib2.0-doc",
        dir: "usr/share/gtk-doc/html",
        start: "glib/index.html",
        sample: None,
        hosts: &[
            ("glib", RealRole::Origin),
            ("glib-exact", RealRole::ExactMirror),
        ],
    },
    CorpusManual {
        name: "rdoc",
        generator: "RDoc",
        package: "ruby-rubymail-doc",
        dir: "usr/share/doc/ruby-rubymail-doc/html",
        start: "index.html",
        sample: None,
        hosts: &[
            ("rdoc", RealRole::Origin),
            ("rdoc-notice", RealRole::Notice),
        ],
    },
    CorpusManual {
        name: "boost174",
        generator: "BoostBook",
        package: "libboost1.74-doc",
        dir: "usr/share/doc/libboost1.74-doc/doc/html",
        start: "index.html",
        sample: Some(BOOST_SAMPLE),
        hosts: &[("boost174", RealRole::Version)],
    },
    CorpusManual {
        name: "boost181",
        generator: "BoostBook",
        package: "libboost1.81-doc",
        dir: "usr/share/doc/libboost1.81-doc/doc/html",
        start: "index.html",
        sample: Some(BOOST_SAMPLE),
        hosts: &[("boost181", RealRole::Version)],
    },
    CorpusManual {
        name: "octave",
        generator: "Texinfo",
        package: "octave-doc",
        dir: "usr/share/doc/octave/octave.html",
        start: "index.html",
        sample: None,
        hosts: &[("octave", RealRole::Unrelated)],
    },
    CorpusManual {
        name: "sdl2",
        generator: "Doxygen",
        package: "libsdl2-doc",
        dir: "usr/share/doc/libsdl2-doc/html",
        // Its index builds the menu in JavaScript: the list of headers links every page.
        start: "files.html",
        sample: None,
        hosts: &[("sdl2", RealRole::Unrelated)],
    },
    CorpusManual {
        name: "mkdocs",
        generator: "MkDocs",
        package: "mkdocs-doc",
        dir: "usr/share/doc/mkdocs/html",
        start: "index.html",
        sample: None,
        hosts: &[("mkdocs", RealRole::Unrelated)],
    },
    CorpusManual {
        name: "pango",
        generator: "gi-docgen",
        package: "libpango1.0-doc",
        dir: "usr/share/doc/libpango1.0-doc/reference/Pango",
        start: "index.html",
        sample: None,
        hosts: &[("pango", RealRole::Unrelated)],
    },
    CorpusManual {
        name: "postgresql",
        generator: "DocBook XSL",
        package: "postgresql-doc-15",
        dir: "usr/share/doc/postgresql-doc-15/html",
        start: "index.html",
        sample: None,
        hosts: &[("postgresql", RealRole::Unrelated)],
    },
    CorpusManual {
        name: "vim",
        generator: "vim2html",
        package: "vim-doc",
        dir: "usr/share/doc/vim/html",
        start: "index.html",
        sample: None,
        hosts: &[("vim", RealRole::Origin), ("vim-noisy", RealRole::Noisy)],
    },
    CorpusManual {
        name: "zsh",
        generator: "texi2html",
        package: "zsh-doc",
        dir: "usr/share/doc/zsh-common/html",
        start: "index.html",
        sample: None,
        hosts: &[
            ("zsh", RealRole::Origin),
            ("zsh-notice", RealRole::Notice),
            ("zsh-exact", RealRole::ExactMirror),
        ],
    },
    CorpusManual {
        name: "nodejs",
        generator: "Node.js doctool",
        package: "nodejs-doc",
        dir: "usr/share/doc/nodejs/api",
        start: "index.html",
        sample: None,
        hosts: &[
            ("nodejs", RealRole::Origin),
            ("nodejs-alias", RealRole::Alias),
        ],
    },
    CorpusManual {
        name: "qtnetwork",
        generator: "QDoc",
        package: "qtbase5-doc-html",
        dir: "usr/share/qt5/doc/qtnetwork",
        start: "qtnetwork-index.html",
        sample: None,
        hosts: &[
            ("qtnetwork", RealRole::Origin),
            ("qtnetwork-prefix", RealRole::PrefixMirror),
            ("qtnetwork-tracking", RealRole::Tracking),
        ],
    },
    CorpusManual {
        name: "asciidoctor",
        generator: "YARD",
        package: "asciidoctor-doc",
        dir: "usr/share/doc/asciidoctor-doc/html",
        start: "index.html",
        sample: None,
        hosts: &[
            ("asciidoctor", RealRole::Origin),
            ("asciidoctor-notice", RealRole::Notice),
        ],
    },
    CorpusManual {
        name: "libxml2",
        generator: "libxml2's XSLT site",
        package: "libxml2-doc",
        dir: "usr/share/doc/libxml2/html",
        start: "index.html",
        sample: None,
        hosts: &[
            ("libxml2", RealRole::Origin),
            ("libxml2-noisy", RealRole::Noisy),
        ],
    },
    CorpusManual {
        name: "erlang",
        generator: "Erlang/OTP's erl_docgen",
        package: "erlang-doc",
        dir: "usr/share/doc/erlang-doc",
        start: "doc/index.html",
        sample: None,
        hosts: &[
            ("erlang", RealRole::Origin),
            ("erlang-noisy", RealRole::Noisy),
        ],
    },
    CorpusManual {
        name: "racket",
        generator: "Scribble",
        package: "racket-doc",
        dir: "usr/share/doc/racket",
        start: "index.html",
        sample: None,
        hosts: &[
            ("racket", RealRole::Origin),
            ("racket-notice", RealRole::Notice),
        ],
    },
];

/// The files of both Boost versions: the same rule, so that a file of one version whose name
/// the other has is served by both.
const BOOST_SAMPLE: Sample = Sample {
    pages: &[],
    dirs: &[
        ("", "", 250),
        ("container", "", 50),
        ("intrusive", "", 50),
        ("move", "", 50),
        ("circular_buffer", "", 50),
        ("boost/container", "", 120),
        ("boost/intrusive", "", 80),
    ],
};

/// Which manuals, behind which hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealWebConfig {
    /// The manuals.
    pub manuals: Vec<Manual>,
    /// The hosts; an alias redirects to the first [`RealRole::Origin`] of its manual.
    pub hosts: Vec<RealHost>,
}

impl RealWebConfig {
    /// A web with the hub alone; [`RealWebConfig::add`] puts manuals behind hosts.
    pub fn hub() -> RealWebConfig {
        RealWebConfig {
            manuals: Vec::new(),
            hosts: vec![RealHost {
                name: "hub".into(),
                role: RealRole::Hub,
                manual: None,
            }],
        }
    }

    /// Adds `manual`, served by `hosts` (name and role each).
    pub fn add(&mut self, manual: Manual, hosts: &[(&str, RealRole)]) {
        for (name, role) in hosts {
            self.hosts.push(RealHost {
                name: (*name).to_string(),
                role: *role,
                manual: Some(manual.name.clone()),
            });
        }
        self.manuals.push(manual);
    }

    /// The first web: `main` behind the seven copy roles, `old` and `new` (two versions of
    /// one manual) on a host each, `other` on its own host, and the hub.
    pub fn standard(main: Manual, old: Manual, new: Manual, other: Manual) -> RealWebConfig {
        let mut web = RealWebConfig::hub();
        web.add(main, CORPUS[0].hosts);
        web.add(old, &[("old", RealRole::Version)]);
        web.add(new, &[("new", RealRole::Version)]);
        web.add(other, &[("other", RealRole::Unrelated)]);
        web
    }

    /// The web of [`CORPUS`] over the Debian documentation packages that
    /// `scripts/realweb-fetch.sh` unpacks into `cache` (one `dpkg-deb -x` root per package), the
    /// large ones sampled.
    pub fn debian(cache: &Path) -> Result<RealWebConfig, TestSiteError> {
        RealWebConfig::corpus(|m| {
            let manual = Manual::new(m.name, cache.join(m.package).join(m.dir), m.start)?;
            match &m.sample {
                Some(sample) => manual.sampled(sample),
                None => Ok(manual),
            }
        })
    }

    /// The web of [`CORPUS`] over the slice of real pages checked in under `dir`
    /// (`tests/realweb/` of the repository): one subdirectory per manual, named as the manual,
    /// its files at the same paths as in the package; every file of it is served.
    pub fn slice(dir: &Path) -> Result<RealWebConfig, TestSiteError> {
        RealWebConfig::corpus(|m| Manual::new(m.name, dir.join(m.name), m.start))
    }

    fn corpus(
        manual: impl Fn(&CorpusManual) -> Result<Manual, TestSiteError>,
    ) -> Result<RealWebConfig, TestSiteError> {
        let mut web = RealWebConfig::hub();
        for m in CORPUS {
            web.add(manual(m)?, m.hosts);
        }
        Ok(web)
    }

    /// The name of the host an alias serving `manual` redirects to: the manual's first origin.
    fn origin_of(&self, manual: &str) -> Option<usize> {
        self.hosts
            .iter()
            .position(|h| h.role == RealRole::Origin && h.manual.as_deref() == Some(manual))
    }

    /// Serves every host on its own port of 127.0.0.1, on the current tokio runtime.
    pub async fn serve(self) -> Result<RunningRealWeb, TestSiteError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(TestSiteError::NoRuntime);
        }
        let mut bound = Vec::new();
        for host in &self.hosts {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .await
                .map_err(|source| TestSiteError::BindReal {
                    host: host.name.clone(),
                    source,
                })?;
            let addr = listener
                .local_addr()
                .map_err(|source| TestSiteError::BindReal {
                    host: host.name.clone(),
                    source,
                })?;
            bound.push((format!("http://{addr}"), listener));
        }
        let bases: Vec<String> = bound.iter().map(|(b, _)| b.clone()).collect();
        let hub_page = hub_page(&self, &bases);
        let log = Arc::new(RealLog::default());
        let (shutdown, _) = watch::channel(false);
        let responses = Arc::new(Mutex::new(HashMap::new()));
        let mut accept_loops = Vec::new();
        for (i, (host, (_, listener))) in self.hosts.iter().zip(bound).enumerate() {
            let manual = host
                .manual
                .as_ref()
                .and_then(|m| self.manuals.iter().find(|x| &x.name == m).cloned());
            let origin = host
                .manual
                .as_deref()
                .and_then(|m| self.origin_of(m))
                .map(|o| bases[o].clone());
            let server = Arc::new(RealHostServer {
                index: i,
                role: host.role,
                prefix: host.prefix(),
                manual,
                origin,
                hub_page: hub_page.clone(),
                log: Arc::clone(&log),
                responses: Arc::clone(&responses),
            });
            accept_loops.push(tokio::spawn(accept_loop(
                listener,
                server,
                shutdown.subscribe(),
            )));
        }
        Ok(RunningRealWeb {
            config: self,
            bases,
            log,
            shutdown,
            accept_loops,
        })
    }
}

/// The hub's seed page: a link to every other host's start page.
fn hub_page(config: &RealWebConfig, bases: &[String]) -> Bytes {
    let mut page = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Real-page web</title></head>\n<body><h1>Real-page web</h1>\n<ul>\n",
    );
    for (host, base) in config.hosts.iter().zip(bases) {
        let Some(manual) = host.manual.as_ref() else {
            continue;
        };
        let start = config
            .manuals
            .iter()
            .find(|m| &m.name == manual)
            .map_or("index.html", |m| m.start.as_str());
        let _ = writeln!(
            page,
            "<li><a href=\"{base}{}/{start}\">{manual} on the {} host ({})</a></li>",
            host.prefix(),
            host.name,
            host.role.as_str()
        );
    }
    page.push_str("</ul>\n</body></html>\n");
    Bytes::from(page)
}

/// A [`RealWebConfig`] being served. Dropping it stops the servers.
pub struct RunningRealWeb {
    config: RealWebConfig,
    bases: Vec<String>,
    log: Arc<RealLog>,
    shutdown: watch::Sender<bool>,
    accept_loops: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningRealWeb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningRealWeb")
            .field("bases", &self.bases)
            .finish_non_exhaustive()
    }
}

/// One logged request target of the real-page web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealRequest {
    /// The host's name.
    pub host: String,
    /// Path and query as requested.
    pub target: String,
    /// The status of the last answer.
    pub status: u16,
    /// How many times it was requested.
    pub count: u64,
}

impl RunningRealWeb {
    /// The seed page's URL (the hub's `/`).
    pub fn seed(&self) -> String {
        let hub = self
            .config
            .hosts
            .iter()
            .position(|h| h.role == RealRole::Hub)
            .unwrap_or(0);
        format!("{}/", self.bases[hub])
    }

    /// The base URL (`http://127.0.0.1:PORT`) of the host called `name`.
    pub fn base(&self, name: &str) -> Option<&str> {
        self.config
            .hosts
            .iter()
            .position(|h| h.name == name)
            .map(|i| self.bases[i].as_str())
    }

    /// The absolute URL of manual file `relpath` on host `name`.
    pub fn url(&self, name: &str, relpath: &str) -> Option<String> {
        let i = self.config.hosts.iter().position(|h| h.name == name)?;
        Some(format!(
            "{}{}/{relpath}",
            self.bases[i],
            self.config.hosts[i].prefix()
        ))
    }

    /// The configuration being served.
    pub fn config(&self) -> &RealWebConfig {
        &self.config
    }

    /// Requests served to host `name`, robots.txt excluded.
    pub fn requests_to(&self, name: &str) -> u64 {
        self.requests()
            .iter()
            .filter(|r| r.host == name && r.target != "/robots.txt")
            .map(|r| r.count)
            .sum()
    }

    /// Every request target served so far, by host in configuration order, then target.
    pub fn requests(&self) -> Vec<RealRequest> {
        let targets = self.log.targets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<RealRequest> = targets
            .iter()
            .map(|((host, target), (count, status))| RealRequest {
                host: self.config.hosts[*host].name.clone(),
                target: target.clone(),
                status: *status,
                count: *count,
            })
            .collect();
        let order = |name: &str| self.config.hosts.iter().position(|h| h.name == name);
        out.sort_by(|a, b| (order(&a.host), &a.target).cmp(&(order(&b.host), &b.target)));
        out
    }

    /// The web as JSON, for the truth script: the seed, the manuals (name, root, start, and for a
    /// sampled manual the only HTML files served) and the hosts (name, role, base URL, manual, path prefix, and where the alias redirects).
    pub fn describe(&self) -> String {
        let mut out = format!("{{\"seed\": {},\n \"manuals\": {{", json_str(&self.seed()));
        for (i, m) in self.config.manuals.iter().enumerate() {
            let root = std::path::absolute(&m.root).unwrap_or_else(|_| m.root.clone());
            let _ = write!(
                out,
                "{}\n  {}: {{\"root\": {}, \"start\": {}",
                if i == 0 { "" } else { "," },
                json_str(&m.name),
                json_str(&root.to_string_lossy()),
                json_str(&m.start)
            );
            if let Some(only) = &m.only {
                out.push_str(", \"files\": [");
                for (j, f) in only.iter().enumerate() {
                    let _ = write!(out, "{}{}", if j == 0 { "" } else { ", " }, json_str(f));
                }
                out.push(']');
            }
            out.push('}');
        }
        out.push_str("},\n \"hosts\": [");
        for (i, (h, base)) in self.config.hosts.iter().zip(&self.bases).enumerate() {
            let _ = write!(
                out,
                "{}\n  {{\"name\": {}, \"role\": {}, \"base\": {}, \"prefix\": {}",
                if i == 0 { "" } else { "," },
                json_str(&h.name),
                json_str(h.role.as_str()),
                json_str(base),
                json_str(h.prefix())
            );
            if let Some(m) = &h.manual {
                let _ = write!(out, ", \"manual\": {}", json_str(m));
            }
            if h.role == RealRole::Alias
                && let Some(o) = h.manual.as_deref().and_then(|m| self.config.origin_of(m))
            {
                let name = &self.config.hosts[o].name;
                let _ = write!(out, ", \"redirects_to\": {}", json_str(name));
            }
            out.push('}');
        }
        out.push_str("]}\n");
        out
    }

    /// The request log as JSON lines (`{"host", "target", "status"}`, one line per request).
    pub fn requests_jsonl(&self) -> String {
        let mut out = String::new();
        for r in self.requests() {
            for _ in 0..r.count {
                let _ = writeln!(
                    out,
                    "{{\"host\": {}, \"target\": {}, \"status\": {}}}",
                    json_str(&r.host),
                    json_str(&r.target),
                    r.status
                );
            }
        }
        out
    }

    /// Stops gracefully.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in std::mem::take(&mut self.accept_loops) {
            let _ = task.await;
        }
    }
}

impl Drop for RunningRealWeb {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        for task in &self.accept_loops {
            task.abort();
        }
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Request counts per (host index, target), with the last status.
#[derive(Debug, Default)]
struct RealLog {
    targets: Mutex<HashMap<(usize, String), (u64, u16)>>,
}

impl RealLog {
    fn record(&self, host: usize, target: &str, status: u16) {
        let mut targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        let slot = targets.entry((host, target.to_string())).or_insert((0, 0));
        slot.0 += 1;
        slot.1 = status;
    }
}

struct RealHostServer {
    index: usize,
    role: RealRole,
    prefix: &'static str,
    manual: Option<Manual>,
    /// The base URL of the manual's origin, where an alias redirects.
    origin: Option<String>,
    hub_page: Bytes,
    log: Arc<RealLog>,
    /// Counts the noisy and session hosts' responses by host and request target, so that each
    /// response gets fresh values ([`RealHostServer::nonce`]).
    responses: Arc<Mutex<HashMap<(usize, String), u64>>>,
}

impl Handler for RealHostServer {
    fn handle(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let target = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
        let response = if !matches!(*request.method(), Method::GET | Method::HEAD) {
            plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
        } else {
            self.respond(target, request.uri().path())
        };
        self.log
            .record(self.index, target, response.status().as_u16());
        response
    }
}

impl RealHostServer {
    /// The values of this response to `target`: fresh in every response, yet the `i`-th
    /// response to a target is the same in every run whatever the order of the requests, so that
    /// two crawls of the real-page web see the same pages (a crawl split over processes fetches
    /// in another order than one process).
    fn nonce(&self, target: &str) -> u64 {
        let mut responses = self.responses.lock().unwrap_or_else(|e| e.into_inner());
        let count = responses
            .entry((self.index, target.to_string()))
            .or_insert(0);
        *count += 1;
        let key = target
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64 ^ self.index as u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        mix(key ^ mix(*count))
    }

    fn respond(&self, target: &str, path: &str) -> Response<Full<Bytes>> {
        match self.role {
            RealRole::Hub if path == "/" => ok("text/html; charset=utf-8", self.hub_page.clone()),
            RealRole::Hub => plain(StatusCode::NOT_FOUND, "not found\n"),
            RealRole::Alias => match &self.origin {
                Some(origin) => match HeaderValue::from_str(&format!("{origin}{target}")) {
                    Ok(location) => {
                        let mut r = plain(StatusCode::MOVED_PERMANENTLY, "moved\n");
                        r.headers_mut().insert(LOCATION, location);
                        r
                    }
                    Err(_) => plain(StatusCode::BAD_REQUEST, "bad request target\n"),
                },
                None => plain(StatusCode::NOT_FOUND, "not found\n"),
            },
            _ => self.file(target, path),
        }
    }

    fn file(&self, target: &str, path: &str) -> Response<Full<Bytes>> {
        let not_found = || plain(StatusCode::NOT_FOUND, "not found\n");
        let (Some(manual), Some(rest)) = (&self.manual, path.strip_prefix(self.prefix)) else {
            return not_found();
        };
        let Some(rel) = relative_path(rest) else {
            return not_found();
        };
        let file = manual.root.join(&rel);
        let content_type = content_type(&file);
        let html = content_type.starts_with("text/html");
        if html && !manual.serves(&rel) {
            return not_found(); // outside a sampled manual's files
        }
        let Ok(body) = std::fs::read(&file) else {
            return not_found();
        };
        if !html {
            return ok(content_type, Bytes::from(body));
        }
        let html = String::from_utf8_lossy(&body);
        let n = self.nonce(target);
        let page = match self.role {
            RealRole::PrefixMirror => rewrite_hrefs(&html, |href| {
                href.starts_with('/')
                    .then(|| format!("{REAL_MIRROR_PREFIX}{href}"))
                    .filter(|_| !href.starts_with("//"))
            }),
            RealRole::Tracking => rewrite_hrefs(&html, |href| {
                add_param(
                    href,
                    "utm_source=docs-mirror&utm_medium=web&utm_campaign=manual",
                )
            }),
            RealRole::Session => {
                let session = format!("sessionid={:016x}{:016x}", mix(n), mix(!n));
                rewrite_hrefs(&html, |href| add_param(href, &session))
            }
            RealRole::Noisy => inject_noise(&html, n),
            RealRole::Notice => insert_notice(&html),
            _ => return ok(content_type, Bytes::from(body)),
        };
        ok(content_type, Bytes::from(page))
    }
}

fn ok(content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut()
        .insert(SERVER, HeaderValue::from_static("simcrawl-testsite"));
    r
}

/// The file a request path names under the root: percent-decoded, `dir/` meaning
/// `dir/index.html`, and no `..` (None: not found).
fn relative_path(path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(path)?;
    let mut rel = decoded.trim_start_matches('/').to_string();
    if rel.is_empty() || rel.ends_with('/') {
        rel.push_str("index.html");
    }
    let rel = PathBuf::from(rel);
    rel.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(rel)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        Some("png") => "image/png",
        Some("gif") => "image/gif",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `href` with `param` added to its query, for links that stay on the host (relative or
/// path-absolute); None for fragments, other schemes and other hosts.
fn add_param(href: &str, param: &str) -> Option<String> {
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    if href.is_empty() || href.starts_with('#') || href.starts_with("//") || lower.contains(':') {
        return None;
    }
    let (base, fragment) = match href.find('#') {
        Some(i) => href.split_at(i),
        None => (href, ""),
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}{param}{fragment}"))
}

/// Rewrites every `href="..."` (or single-quoted) attribute value for which `f` returns a new
/// value; the rest of the page is copied as it is.
fn rewrite_hrefs(html: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(html.len() + html.len() / 8);
    let mut rest = html;
    while let Some(i) = rest.find("href=") {
        let (before, after) = rest.split_at(i + 5);
        out.push_str(before);
        let quote = after.chars().next();
        let Some(q @ ('"' | '\'')) = quote else {
            rest = after;
            continue;
        };
        let value_start = &after[1..];
        let Some(end) = value_start.find(q) else {
            rest = after;
            continue;
        };
        let value = &value_start[..end];
        out.push(q);
        match f(value) {
            Some(new) => out.push_str(&new),
            None => out.push_str(value),
        }
        out.push(q);
        rest = &value_start[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the body's content starts: just past the `<body ...>` start tag (any case, any
/// attributes); None when the page has no body tag.
fn body_start(html: &str) -> Option<usize> {
    let bytes = html.as_bytes();
    let mut from = 0;
    while let Some(i) = html[from..].find('<').map(|i| from + i) {
        let name = bytes.get(i + 1..i + 5)?;
        let after = bytes.get(i + 5).copied();
        if name.eq_ignore_ascii_case(b"body")
            && matches!(after, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/'))
        {
            return html[i..].find('>').map(|j| i + j + 1);
        }
        from = i + 1;
    }
    None
}

/// The page with [`MIRROR_NOTICE`] in a paragraph of its own right after the body's start tag
/// (at the very start when it has none): the same in every response.
fn insert_notice(html: &str) -> String {
    let notice = format!("\n<p class=\"mirror-notice\">{MIRROR_NOTICE}</p>\n");
    let at = body_start(html).unwrap_or(0);
    let mut out = String::with_capacity(html.len() + notice.len());
    out.push_str(&html[..at]);
    out.push_str(&notice);
    out.push_str(&html[at..]);
    out
}

/// An ad banner with a session id and a timestamp after `<body ...>`, and an ad before
/// `</body>`, different in every response.
fn inject_noise(html: &str, n: u64) -> String {
    const PRODUCTS: [&str; 6] = [
        "cloud hosting",
        "a faster laptop",
        "noise cancelling headphones",
        "travel insurance",
        "an online course",
        "standing desks",
    ];
    let r = mix(n ^ 0x5eed);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let top = format!(
        "<div class=\"ad-banner\"><span>Advertisement</span> Save {}% on {} today. Offer {:08x}.</div>\n<p class=\"session\">Session {:016x}, served {} by node-{}</p>\n",
        5 + r % 70,
        PRODUCTS[(r >> 8) as usize % PRODUCTS.len()],
        (r >> 16) as u32,
        mix(r),
        format_utc(now),
        1 + (r >> 40) % 9
    );
    let bottom = format!(
        "<div class=\"advert\">Sponsored: {} from {} dollars.</div>\n",
        PRODUCTS[(r >> 24) as usize % PRODUCTS.len()],
        10 + (r >> 32) % 90
    );
    let mut out = String::with_capacity(html.len() + top.len() + bottom.len());
    let body_open = body_start(html);
    let body_close = html.rfind("</body>");
    match (body_open, body_close) {
        (Some(open), Some(close)) if open <= close => {
            out.push_str(&html[..open]);
            out.push_str(&top);
            out.push_str(&html[open..close]);
            out.push_str(&bottom);
            out.push_str(&html[close..]);
        }
        _ => {
            out.push_str(&top);
            out.push_str(html);
            out.push_str(&bottom);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_s_values_are_fresh_and_the_same_in_every_run() {
        let server = |index| RealHostServer {
            index,
            role: RealRole::Noisy,
            prefix: "",
            manual: None,
            origin: None,
            hub_page: Bytes::new(),
            log: Arc::new(RealLog::default()),
            responses: Arc::new(Mutex::new(HashMap::new())),
        };
        let (one, other) = (server(3), server(3));
        let first = [
            one.nonce("/a.html"),
            one.nonce("/b.html"),
            one.nonce("/a.html"),
        ];
        assert_ne!(first[0], first[2], "a second response to a URL is fresh");
        assert_ne!(first[0], first[1]);
        // Another run, the requests in another order: the same values for each URL's responses.
        let b = other.nonce("/b.html");
        let a = [other.nonce("/a.html"), other.nonce("/a.html")];
        assert_eq!([a[0], b, a[1]], first);
        assert_ne!(
            server(4).nonce("/a.html"),
            first[0],
            "another host's differ"
        );
    }

    #[test]
    fn hrefs_are_rewritten_in_place() {
        let html = r##"<a href="a.html">a</a> <a href='b.html#x'>b</a> <a href="#top">t</a> <a href="https://x.org/">x</a>"##;
        let out = rewrite_hrefs(html, |h| add_param(h, "utm_source=s"));
        assert_eq!(
            out,
            r##"<a href="a.html?utm_source=s">a</a> <a href='b.html?utm_source=s#x'>b</a> <a href="#top">t</a> <a href="https://x.org/">x</a>"##
        );
        assert_eq!(add_param("p?a=1", "s=2").as_deref(), Some("p?a=1&s=2"));
        assert_eq!(add_param("mailto:x@y", "s=2"), None);
    }

    #[test]
    fn paths_stay_under_the_root() {
        assert_eq!(relative_path("/"), Some(PathBuf::from("index.html")));
        assert_eq!(relative_path("/a/"), Some(PathBuf::from("a/index.html")));
        assert_eq!(
            relative_path("/a%20b.html"),
            Some(PathBuf::from("a b.html"))
        );
        assert_eq!(relative_path("/../etc/passwd"), None);
        assert_eq!(relative_path("/a/%2e%2e/%2e%2e/x"), None);
        assert_eq!(relative_path("/%zz"), None);
    }

    #[test]
    fn the_notice_goes_right_after_the_body_start_tag() {
        let html = "<html><head><title>t</title></head>\n<BODY class=\"x\" id='top'><p>Text</p></BODY></html>";
        let out = insert_notice(html);
        let at = out.find(MIRROR_NOTICE).expect("the notice");
        assert!(out[..at].ends_with("<BODY class=\"x\" id='top'>\n<p class=\"mirror-notice\">"));
        assert_eq!(
            out.replace(
                &format!("\n<p class=\"mirror-notice\">{MIRROR_NOTICE}</p>\n"),
                ""
            ),
            html
        );
        assert_eq!(insert_notice(html), out, "the same in every response");
        // `<bodyguard>` is not a body tag; a page without one gets the notice first.
        assert_eq!(body_start("<bodyguard><body>x"), Some(17));
        assert_eq!(body_start("<p>no body</p>"), None);
        assert!(insert_notice("<p>x</p>").starts_with("\n<p class=\"mirror-notice\">"));
    }

    #[test]
    fn a_sample_is_the_start_the_pages_and_the_first_files_of_each_directory() {
        let root = std::env::temp_dir().join(format!("simcrawl-sample-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for f in [
            "start.html",
            "extra.html",
            "d/b.html",
            "d/a.html",
            "d/c.html",
            "d/index.html",
            "d/z.css",
            "d/sub/a.html",
        ] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "<html><body>x</body></html>").unwrap();
        }
        let manual = Manual::new("m", root.clone(), "start.html").unwrap();
        let sample = Sample {
            pages: &["extra.html", "missing.html"],
            dirs: &[("d", "", 1), ("d", "c.html", 1)],
        };
        let files: Vec<String> = sample.files(&manual).unwrap().into_iter().collect();
        assert_eq!(
            files,
            [
                "d/a.html",
                "d/c.html",
                "d/index.html",
                "extra.html",
                "start.html"
            ]
        );
        let manual = manual.sampled(&sample).unwrap();
        assert!(manual.serves(Path::new("d/c.html")));
        assert!(!manual.serves(Path::new("d/b.html")));
        assert!(!manual.serves(Path::new("d/sub/a.html")));
        assert!(matches!(
            Sample {
                pages: &[],
                dirs: &[("nowhere", "", 1)]
            }
            .files(&manual),
            Err(TestSiteError::SampleDir { .. })
        ));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_alias_redirects_to_its_own_manuals_origin() {
        let manual = |name: &str| Manual {
            name: name.to_string(),
            root: PathBuf::from("/nowhere"),
            start: "index.html".to_string(),
            only: None,
        };
        let mut web = RealWebConfig::hub();
        web.add(
            manual("a"),
            &[("a", RealRole::Origin), ("a-alias", RealRole::Alias)],
        );
        web.add(
            manual("b"),
            &[("b", RealRole::Origin), ("b-alias", RealRole::Alias)],
        );
        assert_eq!(web.origin_of("a"), Some(1));
        assert_eq!(web.origin_of("b"), Some(3));
        assert_eq!(web.origin_of("hub"), None);
    }

    #[test]
    fn the_corpus_names_each_host_once_and_gives_every_alias_an_origin() {
        let mut names = std::collections::HashSet::new();
        let generators: std::collections::HashSet<&str> = CORPUS
            .iter()
            .flat_map(|m| m.generator.split(", "))
            .collect();
        assert!(generators.len() >= 8, "{generators:?}");
        for m in CORPUS {
            for (name, role) in m.hosts {
                assert!(names.insert(*name), "{name} twice");
                if *role == RealRole::Alias {
                    assert!(
                        m.hosts.iter().any(|(_, r)| *r == RealRole::Origin),
                        "{}",
                        m.name
                    );
                }
            }
        }
    }

    #[test]
    fn noise_differs_per_response_and_keeps_the_body() {
        let html = "<html><body class=\"x\"><p>Text</p></body></html>";
        let (a, b) = (inject_noise(html, 1), inject_noise(html, 2));
        assert_ne!(a, b);
        assert!(a.contains("<p>Text</p>"));
        assert!(a.find("Advertisement").unwrap() > a.find("<body").unwrap());
    }
}
