//! The rtnetlink requests that set up a private network namespace: bring
//! `lo` up, add the policy-routing rules that refuse ranges, and the rules
//! that let the DNS forwarder through; for slirp4netns, which leaves IPv6
//! to router advertisements (seconds late), the IPv6 address and default
//! route it would advertise. Built before the fork as plain bytes
//! ([`Batch`]); sent from inside the namespace by [`send_all`], one `send`
//! for many requests, which allocates nothing (it runs in a forked child
//! of a multi-threaded process).
//!
//! Rules rather than routes: a rule needs no interface, so none depends on
//! the stack's tap device, and the local table (rule 0) still comes first,
//! so the namespace's own addresses stay its own. This module builds and sends; which ranges is the caller's.

use std::net::{IpAddr, Ipv6Addr};

const RTM_NEWLINK: u16 = 16;
const RTM_NEWADDR: u16 = 20;
const RTM_NEWROUTE: u16 = 24;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_FLAGS: u16 = 8;
const IFA_F_NODAD: u8 = 0x02;
const RTA_OIF: u16 = 4;
const RTA_GATEWAY: u16 = 5;
const RTPROT_STATIC: u8 = 4;
const RTN_UNICAST: u8 = 1;
const RTM_NEWRULE: u16 = 32;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const FRA_DST: u16 = 1;
const FRA_PRIORITY: u16 = 6;
const FRA_TABLE: u16 = 15;
const FRA_IP_PROTO: u16 = 22;
const FRA_DPORT_RANGE: u16 = 24;
const FR_ACT_TO_TBL: u8 = 1;
const FR_ACT_PROHIBIT: u8 = 8;
const RT_TABLE_MAIN: u32 = 254;
const LOOPBACK_INDEX: i32 = 1;

/// Priority of the rules that let traffic through before the refusals.
pub(crate) const ALLOW_PRIORITY: u32 = 1000;
/// Priority of the refusing rules: after the local table (0), before the
/// main table (32766).
pub(crate) const REFUSE_PRIORITY: u32 = 1100;

/// One request, ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request(Vec<u8>);

/// `ip link set lo up`: a fresh network namespace's loopback is down.
pub(crate) fn loopback_up() -> Request {
    let mut body = Vec::with_capacity(16);
    body.push(0u8); // family: unspecified
    body.push(0u8); // pad
    body.extend_from_slice(&0u16.to_ne_bytes()); // type
    body.extend_from_slice(&LOOPBACK_INDEX.to_ne_bytes());
    let up = libc::IFF_UP as u32;
    body.extend_from_slice(&up.to_ne_bytes()); // flags
    body.extend_from_slice(&up.to_ne_bytes()); // change
    message(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, &body)
}

/// `ip rule add to NETWORK/PREFIX prohibit pref REFUSE_PRIORITY`: a
/// connect or send there fails with `EACCES`.
pub(crate) fn refuse(network: IpAddr, prefix: u8) -> Request {
    let mut body = rule_header(network, prefix, 0, FR_ACT_PROHIBIT);
    attribute(&mut body, FRA_DST, &address_bytes(network));
    attribute(&mut body, FRA_PRIORITY, &REFUSE_PRIORITY.to_ne_bytes());
    message(
        RTM_NEWRULE,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        &body,
    )
}

/// `ip rule add to NETWORK/PREFIX lookup main pref ALLOW_PRIORITY`: an
/// opened range inside a wider refused one gets through.
pub(crate) fn allow(network: IpAddr, prefix: u8) -> Request {
    let table = u8::try_from(RT_TABLE_MAIN).unwrap_or(u8::MAX);
    let mut body = rule_header(network, prefix, table, FR_ACT_TO_TBL);
    attribute(&mut body, FRA_DST, &address_bytes(network));
    attribute(&mut body, FRA_PRIORITY, &ALLOW_PRIORITY.to_ne_bytes());
    attribute(&mut body, FRA_TABLE, &RT_TABLE_MAIN.to_ne_bytes());
    message(
        RTM_NEWRULE,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        &body,
    )
}

/// `ip rule add to ADDRESS ipproto udp dport 53 lookup main pref
/// ALLOW_PRIORITY`: DNS to the forwarder's address only.
pub(crate) fn allow_dns(address: IpAddr) -> Request {
    let prefix = if address.is_ipv4() { 32 } else { 128 };
    let table = u8::try_from(RT_TABLE_MAIN).unwrap_or(u8::MAX);
    let mut body = rule_header(address, prefix, table, FR_ACT_TO_TBL);
    attribute(&mut body, FRA_DST, &address_bytes(address));
    attribute(&mut body, FRA_PRIORITY, &ALLOW_PRIORITY.to_ne_bytes());
    attribute(&mut body, FRA_TABLE, &RT_TABLE_MAIN.to_ne_bytes());
    attribute(&mut body, FRA_IP_PROTO, &[libc::IPPROTO_UDP as u8]);
    let port: u16 = 53;
    let mut ports = port.to_ne_bytes().to_vec();
    ports.extend_from_slice(&port.to_ne_bytes());
    attribute(&mut body, FRA_DPORT_RANGE, &ports);
    message(
        RTM_NEWRULE,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        &body,
    )
}

/// `ip -6 addr add ADDRESS/PREFIX dev INDEX nodad`: usable at once.
pub(crate) fn add_address_v6(index: u32, address: Ipv6Addr, prefix: u8) -> Request {
    let family = u8::try_from(libc::AF_INET6).unwrap_or(0);
    // struct ifaddrmsg: family, prefixlen, flags, scope, index.
    let mut body = vec![family, prefix, IFA_F_NODAD, 0];
    body.extend_from_slice(&index.to_ne_bytes());
    attribute(&mut body, IFA_LOCAL, &address.octets());
    attribute(&mut body, IFA_ADDRESS, &address.octets());
    attribute(&mut body, IFA_FLAGS, &u32::from(IFA_F_NODAD).to_ne_bytes());
    message(
        RTM_NEWADDR,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        &body,
    )
}

/// `ip -6 route add default via GATEWAY dev INDEX`.
pub(crate) fn add_default_route_v6(index: u32, gateway: Ipv6Addr) -> Request {
    let family = u8::try_from(libc::AF_INET6).unwrap_or(0);
    let table = u8::try_from(RT_TABLE_MAIN).unwrap_or(u8::MAX);
    // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope,
    // type, flags.
    let mut body = vec![family, 0, 0, 0, table, RTPROT_STATIC, 0, RTN_UNICAST];
    body.extend_from_slice(&0u32.to_ne_bytes());
    attribute(&mut body, RTA_GATEWAY, &gateway.octets());
    attribute(&mut body, RTA_OIF, &index.to_ne_bytes());
    message(
        RTM_NEWROUTE,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        &body,
    )
}

fn rule_header(network: IpAddr, prefix: u8, table: u8, action: u8) -> Vec<u8> {
    let family = match network {
        IpAddr::V4(_) => libc::AF_INET,
        IpAddr::V6(_) => libc::AF_INET6,
    };
    // struct fib_rule_hdr: family, dst_len, src_len, tos, table, res1,
    // res2, action, flags.
    let mut body = vec![
        u8::try_from(family).unwrap_or(0),
        prefix,
        0,
        0,
        table,
        0,
        0,
        action,
    ];
    body.extend_from_slice(&0u32.to_ne_bytes());
    body
}

fn address_bytes(address: IpAddr) -> Vec<u8> {
    match address {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

fn attribute(body: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = u16::try_from(4 + payload.len()).unwrap_or(u16::MAX);
    body.extend_from_slice(&len.to_ne_bytes());
    body.extend_from_slice(&kind.to_ne_bytes());
    body.extend_from_slice(payload);
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
}

fn message(kind: u16, flags: u16, body: &[u8]) -> Request {
    let len = u32::try_from(16 + body.len()).unwrap_or(u32::MAX);
    let mut bytes = Vec::with_capacity(16 + body.len());
    bytes.extend_from_slice(&len.to_ne_bytes());
    bytes.extend_from_slice(&kind.to_ne_bytes());
    bytes.extend_from_slice(&flags.to_ne_bytes());
    bytes.extend_from_slice(&0u32.to_ne_bytes()); // seq
    bytes.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel
    bytes.extend_from_slice(body);
    Request(bytes)
}

/// Requests at most this many to a `send`: their acknowledgements then
/// fit the socket's receive buffer (about 1 KiB of it each) however many
/// rules a host's own addresses add.
const BATCH_MAX: usize = 32;

/// Requests to send together, built before the fork: one buffer, each
/// message numbered by its index + 1 so its acknowledgement names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Batch {
    bytes: Vec<u8>,
    /// Where each message ends in `bytes`.
    ends: Vec<usize>,
}

impl Batch {
    pub(crate) fn new(requests: &[Request]) -> Batch {
        let mut bytes = Vec::with_capacity(requests.iter().map(|r| r.0.len()).sum());
        let mut ends = Vec::with_capacity(requests.len());
        for (index, request) in requests.iter().enumerate() {
            let at = bytes.len();
            bytes.extend_from_slice(&request.0);
            let seq = u32::try_from(index + 1).unwrap_or(u32::MAX);
            bytes[at + 8..at + 12].copy_from_slice(&seq.to_ne_bytes());
            ends.push(bytes.len());
        }
        Batch { bytes, ends }
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Sends the batch on a fresh rtnetlink socket, [`BATCH_MAX`] requests to
/// a `send` (the kernel handles them in order), and reads every
/// acknowledgement. `Err((index, errno))` names a refused request.
///
/// # Safety
/// Async-signal-safe (socket, send, recv, close on prepared buffers), for a
/// forked child.
pub(crate) unsafe fn send_all(batch: &Batch) -> Result<(), (usize, i32)> {
    // SAFETY: (the whole block) plain syscalls on live buffers.
    unsafe {
        let fd = libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        );
        if fd < 0 {
            return Err((0, errno()));
        }
        let mut result = Ok(());
        let mut first = 0;
        while first < batch.ends.len() && result.is_ok() {
            let last = (first + BATCH_MAX).min(batch.ends.len());
            result = exchange(fd, batch, first, last);
            first = last;
        }
        libc::close(fd);
        result
    }
}

/// Sends requests `first..last` in one `send` and reads their
/// acknowledgements: 0 in an error field is success.
unsafe fn exchange(
    fd: libc::c_int,
    batch: &Batch,
    first: usize,
    last: usize,
) -> Result<(), (usize, i32)> {
    let from = if first == 0 { 0 } else { batch.ends[first - 1] };
    let bytes = &batch.bytes[from..batch.ends[last - 1]];
    // SAFETY: as in `send_all`; the answers are read into this stack
    // buffer.
    unsafe {
        let sent = libc::send(fd, bytes.as_ptr().cast(), bytes.len(), 0);
        if usize::try_from(sent).ok() != Some(bytes.len()) {
            return Err((first, errno()));
        }
        let mut acknowledged = 0;
        let mut answer = [0u8; 4096];
        while acknowledged < last - first {
            let got = libc::recv(fd, answer.as_mut_ptr().cast(), answer.len(), 0);
            let Ok(got) = usize::try_from(got) else {
                return Err((first + acknowledged, errno()));
            };
            let mut at = 0;
            while at + 20 <= got {
                let word = |i: usize| [answer[i], answer[i + 1], answer[i + 2], answer[i + 3]];
                let len = u32::from_ne_bytes(word(at)) as usize;
                if u16::from_ne_bytes([answer[at + 4], answer[at + 5]]) != NLMSG_ERROR || len < 20 {
                    return Err((first + acknowledged, libc::EPROTO));
                }
                let index = (u32::from_ne_bytes(word(at + 8)) as usize).saturating_sub(1);
                let code = i32::from_ne_bytes(word(at + 16));
                if code != 0 {
                    return Err((index, -code));
                }
                acknowledged += 1;
                at += len.next_multiple_of(4);
            }
        }
        Ok(())
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusing_rule_is_laid_out_as_the_kernel_reads_it() {
        let request = refuse("10.0.0.0".parse().unwrap(), 8);
        let bytes = &request.0;
        assert_eq!(
            u32::from_ne_bytes(bytes[0..4].try_into().unwrap()) as usize,
            bytes.len()
        );
        assert_eq!(u16::from_ne_bytes([bytes[4], bytes[5]]), RTM_NEWRULE);
        // fib_rule_hdr: AF_INET, /8, action prohibit.
        assert_eq!(bytes[16], libc::AF_INET as u8);
        assert_eq!(bytes[17], 8);
        assert_eq!(bytes[23], FR_ACT_PROHIBIT);
        // FRA_DST with the 4 address bytes, then FRA_PRIORITY.
        assert_eq!(&bytes[28..36], &[8, 0, 1, 0, 10, 0, 0, 0]);
        assert_eq!(bytes.len() % 4, 0);
    }

    #[test]
    fn a_batch_numbers_its_requests_from_one() {
        let requests = [loopback_up(), refuse("10.0.0.0".parse().unwrap(), 8)];
        let batch = Batch::new(&requests);
        assert_eq!(batch.len(), 2);
        let second = batch.ends[0];
        let seq = |at: usize| u32::from_ne_bytes(batch.bytes[at + 8..at + 12].try_into().unwrap());
        assert_eq!((seq(0), seq(second)), (1, 2));
        assert_eq!(batch.ends[1], batch.bytes.len());
    }

    #[test]
    fn every_request_of_a_batch_is_acknowledged_and_a_refused_one_is_named() {
        // A network namespace of this test thread's own (root only).
        // SAFETY: unshare moves only the calling thread.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            eprintln!("skipped: unshare(CLONE_NEWNET) was refused (not root)");
            return;
        }
        let mut requests = vec![loopback_up()];
        requests.extend((0..40).map(|i| refuse(std::net::Ipv4Addr::new(10, i, 0, 0).into(), 16)));
        // SAFETY: plain syscalls, in a test thread.
        assert_eq!(unsafe { send_all(&Batch::new(&requests)) }, Ok(()));
        // The same rules again: each exists (NLM_F_EXCL), the first is named.
        requests.remove(0);
        assert_eq!(
            // SAFETY: plain syscalls on the batch's live buffers, in a test thread.
            unsafe { send_all(&Batch::new(&requests)) },
            Err((0, libc::EEXIST))
        );
        // A refused one past the first send (BATCH_MAX) is named by its
        // index in the whole batch.
        let mut fresh: Vec<Request> = (0..40)
            .map(|i| refuse(std::net::Ipv4Addr::new(172, 16 + (i % 16), i, 0).into(), 24))
            .collect();
        fresh[35] = refuse(std::net::Ipv4Addr::new(10, 3, 0, 0).into(), 16);
        assert_eq!(
            // SAFETY: plain syscalls on the batch's live buffers, in a test thread.
            unsafe { send_all(&Batch::new(&fresh)) },
            Err((35, libc::EEXIST))
        );
    }
}
