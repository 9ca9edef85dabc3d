//! The key under construction: its components, how they render, and how a rule step runs.

use std::borrow::Cow;

use crate::explain::{Recorder, RuleName, Step};
use crate::host::{cow_suffix, strip_trailing_dots, www_offset};
use crate::params;
use crate::path;

/// The key being built, component by component.
pub(crate) struct Parts<'p> {
    pub(crate) scheme: &'static str,
    pub(crate) user: &'p str,
    pub(crate) pass: Option<&'p str>,
    pub(crate) host: Cow<'p, str>,
    pub(crate) port: Option<u16>,
    pub(crate) path: Cow<'p, str>,
    /// The query split at `&`: `None` for no `?`, `Some([""])` for a `?` alone.
    pub(crate) query: Option<Vec<&'p str>>,
}

impl Parts<'_> {
    /// The key (or the URL so far) as a string.
    pub(crate) fn render(&self) -> String {
        let query_len = self
            .query
            .as_ref()
            .map_or(0, |q| q.iter().map(|s| s.len() + 1).sum());
        let mut out = String::with_capacity(
            self.scheme.len()
                + 3
                + self.user.len()
                + 2
                + self.pass.map_or(0, str::len)
                + self.host.len()
                + 6
                + self.path.len()
                + query_len,
        );
        out.push_str(self.scheme);
        out.push_str("://");
        if !self.user.is_empty() || self.pass.is_some() {
            out.push_str(self.user);
            if let Some(pass) = self.pass {
                out.push(':');
                out.push_str(pass);
            }
            out.push('@');
        }
        out.push_str(&self.host);
        if let Some(port) = self.port {
            out.push(':');
            out.push_str(crate::host::port_digits(port, &mut [0; 5]));
        }
        out.push_str(&self.path);
        if let Some(params) = &self.query {
            out.push('?');
            for (i, param) in params.iter().enumerate() {
                if i > 0 {
                    out.push('&');
                }
                out.push_str(param);
            }
        }
        out
    }

    /// `host[:port]`, as learned rules name it; borrowed when there is no port.
    pub(crate) fn authority(&self) -> Cow<'_, str> {
        match self.port {
            // Written by hand: this runs for every key of a host with a port, and the
            // formatting machinery cost more than the rest of the lookup.
            Some(port) => {
                let mut buf = [0u8; 5];
                let digits = crate::host::port_digits(port, &mut buf);
                let mut s = String::with_capacity(self.host.len() + 1 + digits.len());
                s.push_str(&self.host);
                s.push(':');
                s.push_str(digits);
                Cow::Owned(s)
            }
            None => Cow::Borrowed(&self.host),
        }
    }

    /// Removes leading `www.` labels from the host; `None` when there are none.
    pub(crate) fn strip_www(&mut self) -> Option<()> {
        let start = www_offset(&self.host)?;
        let host = std::mem::take(&mut self.host);
        self.host = cow_suffix(host, start);
        if self.host.ends_with('.')
            && let Some(stripped) = strip_trailing_dots(&self.host)
        {
            self.host = Cow::Owned(stripped);
        }
        Some(())
    }

    pub(crate) fn truncate_path(&mut self, len: usize) {
        let current = std::mem::take(&mut self.path);
        self.path = path::cow_truncate(current, len);
    }

    /// Removes the query parameters `drop` selects (noting their names in `removed`, if given).
    /// Returns whether any was removed; a query left empty is removed.
    pub(crate) fn remove_params(
        &mut self,
        drop: impl Fn(&str) -> bool,
        mut removed: Option<&mut Vec<String>>,
    ) -> bool {
        let Some(params) = self.query.as_mut() else {
            return false;
        };
        let before = params.len();
        params.retain(|param| {
            let gone = drop(param);
            if gone && let Some(removed) = removed.as_deref_mut() {
                removed.push(params::name_of(param).to_owned());
            }
            !gone
        });
        let changed = params.len() != before;
        if params.is_empty() {
            self.query = None;
        }
        changed
    }
}

/// The parts and where steps go.
pub(crate) struct Run<'p, 'r, R: Recorder> {
    pub(crate) parts: Parts<'p>,
    pub(crate) rec: &'r mut R,
}

impl<'p, R: Recorder> Run<'p, '_, R> {
    /// Runs one rule. `f` gets the parts and whether a detail is wanted, and returns `None`
    /// when it changed nothing, or `Some(detail)`.
    pub(crate) fn step(
        &mut self,
        rule: RuleName,
        f: impl FnOnce(&mut Parts<'p>, bool) -> Option<Option<String>>,
    ) {
        if !R::ENABLED {
            let _ = f(&mut self.parts, false);
            return;
        }
        let before = self.parts.render();
        if let Some(detail) = f(&mut self.parts, true) {
            let after = self.parts.render();
            if after != before {
                self.rec.record(Step {
                    rule,
                    before,
                    after,
                    detail,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authority_spells_its_port_as_formatting_would() {
        for port in [0u16, 1, 9, 10, 80, 443, 8080, 9999, 10000, 41001, 65535] {
            let parts = Parts {
                scheme: "http",
                user: "",
                pass: None,
                host: Cow::Borrowed("127.0.0.1"),
                port: Some(port),
                path: Cow::Borrowed("/"),
                query: None,
            };
            assert_eq!(parts.authority(), format!("127.0.0.1:{port}"));
        }
        let bare = Parts {
            port: None,
            host: Cow::Borrowed("example.com"),
            scheme: "http",
            user: "",
            pass: None,
            path: Cow::Borrowed("/"),
            query: None,
        };
        assert!(matches!(bare.authority(), Cow::Borrowed("example.com")));
    }
}
