//! Address classes and the rules built on them: which addresses may be fetched, and from where.
//!
//! Two rules, both checked on the addresses a connection would really use:
//!
//! 1. **Link-local is never fetched** (169.254.0.0/16, fe80::/10, and the same inside IPv4-mapped and
//!    NAT64 IPv6 addresses). Cloud metadata services live there.
//! 2. **Public never leads to private**: a link on a page served from a public address, or a redirect
//!    answered by one, may not reach a private or loopback address (see [`AddressClass::Private`]).
//!    A seed may be anything but link-local: that is how the demo and the tests run on loopback.
//!    [`FetchConfig::allow_private`](crate::FetchConfig::allow_private) lifts this rule.
//!
//! IP literals in URLs are checked before any request. Host names are checked by the resolver that
//! the HTTP client itself uses ([`PolicyResolver`]), on the very addresses it is about to connect to,
//! so a name that resolves differently the second time (DNS rebinding) cannot slip through.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Where an IP address sits, as far as the fetch policy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// Any address not in the ranges below.
    Public,
    /// Not reachable from the public internet: loopback (127.0.0.0/8, ::1), RFC 1918 (10/8,
    /// 172.16/12, 192.168/16), CGNAT (100.64.0.0/10), unique local (fc00::/7), deprecated site local
    /// (fec0::/10), unspecified and "this network" (0.0.0.0/8, ::), broadcast, multicast and the
    /// reserved 240.0.0.0/4.
    Private,
    /// 169.254.0.0/16 and fe80::/10: never fetched, whatever the origin or the configuration.
    LinkLocal,
}

impl AddressClass {
    /// The class of one address. IPv4-mapped (`::ffff:a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`)
    /// addresses are classed by the IPv4 address inside them.
    pub fn of(ip: IpAddr) -> AddressClass {
        match ip {
            IpAddr::V4(v4) => class_v4(v4),
            IpAddr::V6(v6) => class_v6(v6),
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Public => "public",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
        })
    }
}

fn class_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, ..] = ip.octets();
    if a == 169 && b == 254 {
        return AddressClass::LinkLocal;
    }
    let private = a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || a >= 224; // multicast, reserved 240/4 and broadcast
    if private {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

fn class_v6(ip: Ipv6Addr) -> AddressClass {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return class_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 well-known prefix 64:ff9b::/96 carries an IPv4 address in its last 32 bits.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., hi, lo] = segments;
        let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        return class_v4(v4);
    }
    let first = segments[0];
    if first & 0xffc0 == 0xfe80 {
        return AddressClass::LinkLocal;
    }
    let private = ip.is_loopback()
        || ip.is_unspecified()
        || first & 0xfe00 == 0xfc00 // unique local fc00::/7
        || first & 0xffc0 == 0xfec0 // site local fec0::/10 (deprecated)
        || first & 0xff00 == 0xff00; // multicast
    if private {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

/// Who pointed the fetcher at a URL. It decides which addresses the first request may reach; each
/// redirect hop is then judged by the class of the address that answered the previous hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A seed given by the user: any address but link-local.
    Seed,
    /// A link found on a page that was served from an address of this class
    /// ([`Fetched::address_class`](crate::Fetched::address_class)). From a public page, only public
    /// addresses may be reached (unless private addresses are allowed by the configuration).
    Link(AddressClass),
}

/// Why a URL was refused before it was requested.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyReason {
    /// Only `http` and `https` are fetched; this is the scheme that was refused.
    #[error("scheme `{0}` is not fetched (only http and https)")]
    Scheme(String),
    /// The host is, or resolves to, this link-local address.
    #[error("{0} is a link-local address")]
    LinkLocal(IpAddr),
    /// A public page or redirect led to this private, loopback or otherwise non-public address.
    #[error("a public address may not lead to the private address {0}")]
    PublicToPrivate(IpAddr),
}

/// Which addresses one request may reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Anything but link-local.
    Any,
    /// Public addresses only.
    PublicOnly,
}

impl Reach {
    /// The reach of a request whose referrer (or previous hop) had class `from` (`None`: a seed).
    pub(crate) fn from_origin(from: Option<AddressClass>, allow_private: bool) -> Reach {
        match from {
            _ if allow_private => Reach::Any,
            None | Some(AddressClass::Private) => Reach::Any,
            // A referrer can't be link-local (those are never fetched); be strict if one shows up.
            Some(AddressClass::Public | AddressClass::LinkLocal) => Reach::PublicOnly,
        }
    }
}

/// Host names pinned to addresses and host names classed as public, from the configuration.
#[derive(Debug, Default)]
pub(crate) struct HostTable {
    resolve: HashMap<String, Vec<IpAddr>>,
    public: HashSet<String>,
}

impl HostTable {
    pub(crate) fn new(resolve: &HashMap<String, Vec<IpAddr>>, public: &[String]) -> HostTable {
        HostTable {
            resolve: resolve
                .iter()
                .map(|(host, ips)| (host.to_ascii_lowercase(), ips.clone()))
                .collect(),
            public: public.iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }

    /// The class of `ip` when it is the address of `host`: [`AddressClass::Public`] for a host named
    /// in `public_hosts` (unless the address is link-local, which no setting lifts).
    pub(crate) fn class(&self, host: &str, ip: IpAddr) -> AddressClass {
        let class = AddressClass::of(ip);
        if class != AddressClass::LinkLocal && self.public.contains(host) {
            AddressClass::Public
        } else {
            class
        }
    }

    /// May a request with this reach connect to `host` at these addresses? All of them must pass:
    /// a name with one bad address is refused whole, as the client could pick any of them.
    pub(crate) fn admit(
        &self,
        host: &str,
        ips: &[IpAddr],
        reach: Reach,
    ) -> Result<(), PolicyReason> {
        if let Some(&ip) = ips
            .iter()
            .find(|&&ip| AddressClass::of(ip) == AddressClass::LinkLocal)
        {
            return Err(PolicyReason::LinkLocal(ip));
        }
        if reach == Reach::PublicOnly
            && let Some(&ip) = ips
                .iter()
                .find(|&&ip| self.class(host, ip) != AddressClass::Public)
        {
            return Err(PolicyReason::PublicToPrivate(ip));
        }
        Ok(())
    }

    /// The addresses of `host`: from the configured table, else from the system resolver.
    async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, ResolveFailure> {
        if let Some(ips) = self.resolve.get(host) {
            return if ips.is_empty() {
                Err(ResolveFailure::Dns {
                    host: host.to_owned(),
                    message: "no addresses configured for this host".to_owned(),
                })
            } else {
                Ok(ips.clone())
            };
        }
        let found = tokio::net::lookup_host((host, 0))
            .await
            .map_err(|e| ResolveFailure::Dns {
                host: host.to_owned(),
                message: e.to_string(),
            })?;
        let ips: Vec<IpAddr> = found.map(|sa| sa.ip()).collect();
        if ips.is_empty() {
            return Err(ResolveFailure::Dns {
                host: host.to_owned(),
                message: "the name has no addresses".to_owned(),
            });
        }
        Ok(ips)
    }
}

/// What the resolver hands back to the HTTP client instead of addresses. The fetcher finds it again
/// in the client's error chain and turns it into a DNS or a policy error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResolveFailure {
    #[error("DNS lookup of {host} failed: {message}")]
    Dns { host: String, message: String },
    #[error("{0}")]
    Refused(PolicyReason),
}

/// The DNS resolver installed in each HTTP client: resolves (configured table first), then applies
/// [`HostTable::admit`] with the client's reach to the addresses the client will connect to.
pub(crate) struct PolicyResolver {
    pub(crate) hosts: Arc<HostTable>,
    pub(crate) reach: Reach,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let hosts = Arc::clone(&self.hosts);
        let reach = self.reach;
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let ips = hosts.lookup(&host).await?;
            if let Err(reason) = hosts.admit(&host, &ips, reach) {
                tracing::debug!(%host, %reason, "refused at resolution");
                return Err(ResolveFailure::Refused(reason).into());
            }
            let addrs: Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> AddressClass {
        AddressClass::of(s.parse().expect("test address"))
    }

    #[test]
    fn ipv4_ranges() {
        assert_eq!(class("169.254.169.254"), AddressClass::LinkLocal);
        assert_eq!(class("169.254.0.1"), AddressClass::LinkLocal);
        for private in [
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
        ] {
            assert_eq!(class(private), AddressClass::Private, "{private}");
        }
        for public in [
            "8.8.8.8",
            "172.32.0.1",
            "172.15.0.1",
            "100.128.0.1",
            "169.253.0.1",
            "1.1.1.1",
        ] {
            assert_eq!(class(public), AddressClass::Public, "{public}");
        }
    }

    #[test]
    fn ipv6_ranges() {
        assert_eq!(class("fe80::1"), AddressClass::LinkLocal);
        assert_eq!(class("febf::1"), AddressClass::LinkLocal);
        assert_eq!(class("::ffff:169.254.169.254"), AddressClass::LinkLocal);
        assert_eq!(class("64:ff9b::a9fe:a9fe"), AddressClass::LinkLocal);
        for private in [
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
        ] {
            assert_eq!(class(private), AddressClass::Private, "{private}");
        }
        for public in [
            "2001:db8::1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert_eq!(class(public), AddressClass::Public, "{public}");
        }
    }

    #[test]
    fn reach_follows_the_origin() {
        assert_eq!(Reach::from_origin(None, false), Reach::Any);
        assert_eq!(
            Reach::from_origin(Some(AddressClass::Private), false),
            Reach::Any
        );
        assert_eq!(
            Reach::from_origin(Some(AddressClass::Public), false),
            Reach::PublicOnly
        );
        assert_eq!(
            Reach::from_origin(Some(AddressClass::Public), true),
            Reach::Any
        );
    }

    #[test]
    fn admit_checks_every_address() {
        let table = HostTable::new(&HashMap::new(), &["public.test".to_owned()]);
        let lo: IpAddr = "127.0.0.1".parse().expect("ip");
        let pubip: IpAddr = "8.8.8.8".parse().expect("ip");
        let ll: IpAddr = "169.254.1.1".parse().expect("ip");
        assert_eq!(table.admit("a.test", &[pubip, lo], Reach::Any), Ok(()));
        assert_eq!(
            table.admit("a.test", &[pubip, lo], Reach::PublicOnly),
            Err(PolicyReason::PublicToPrivate(lo))
        );
        // Link-local is refused whatever the reach, even for a host declared public.
        assert_eq!(
            table.admit("public.test", &[pubip, ll], Reach::Any),
            Err(PolicyReason::LinkLocal(ll))
        );
        // A host declared public counts as public.
        assert_eq!(table.admit("public.test", &[lo], Reach::PublicOnly), Ok(()));
    }
}
