//! The rules of the tool process's seccomp filters, by what they stop, as
//! data for seccompiler: systemd's `RestrictSUIDSGID=`,
//! `RestrictNamespaces=` and `RestrictAddressFamilies=` written as
//! argument compares.
//!
//! A compare can only read a syscall's register arguments, never memory a
//! pointer points to: that is why `clone3` and `openat2` (whose flags and
//! mode sit in a struct) are answered `ENOSYS`, so libc falls back to
//! `clone` and `openat`, whose flags are arguments.
//!
//! Nothing here installs anything; [`super::seccomp`] compiles and applies.

use std::collections::BTreeMap;

use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};

/// Rules by syscall number; a syscall with no rule matches always.
pub(crate) type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// `MFD_EXEC` (Linux 6.3): a memfd that may be executed.
const MFD_EXEC: u64 = 0x10;

/// The `CLONE_NEW*` flags of `clone` (every namespace but time, whose bit
/// is part of the exit signal there).
const CLONE_NEW_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The socket families a tool may create: unix always; inet is allowed
/// here and left to the network rule (EPERM with the network off).
const ALLOWED_FAMILIES: [libc::c_int; 3] = [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6];

fn bits(value: libc::c_int) -> u64 {
    u64::from(value.cast_unsigned())
}

/// `op` against `value` on the low 32 bits of argument `index` (every
/// argument compared here is an int or a 32-bit flag word).
fn dword(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
}

/// `arg & bit == bit` on the low 32 bits of argument `index`.
fn has_bit(index: u8, bit: u64) -> Result<SeccompCondition, String> {
    dword(index, SeccompCmpOp::MaskedEq(bit), bit)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// One rule per bit: the call matches when any bit is set in argument
/// `index`.
fn any_bit(index: u8, flags: &[u64]) -> Result<Vec<SeccompRule>, String> {
    flags
        .iter()
        .map(|bit| rule(vec![has_bit(index, *bit)?]))
        .collect()
}

/// RestrictSUIDSGID: chmod and friends with S_ISUID or S_ISGID in the
/// mode, and creating a file or directory with them. A tool's setuid file
/// in the workspace would run as the user from outside the sandbox.
pub(crate) fn suid_sgid(rules: &mut Rules) -> Result<(), String> {
    let modes = [u64::from(libc::S_ISUID), u64::from(libc::S_ISGID)];
    // (syscall, index of the mode argument)
    let mut by_mode = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (libc::SYS_fchmodat2, 2),
        (libc::SYS_mkdirat, 2),
        (libc::SYS_mknodat, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    by_mode.extend([
        (libc::SYS_chmod, 1),
        (libc::SYS_creat, 1),
        (libc::SYS_mkdir, 1),
        (libc::SYS_mknod, 1),
    ]);
    for (nr, mode_arg) in by_mode {
        rules.insert(nr, any_bit(mode_arg, &modes)?);
    }
    // (syscall, index of flags, index of mode): only a call that creates
    // (O_CREAT, or O_TMPFILE whose bits include O_DIRECTORY) uses the mode.
    let mut by_flags = vec![(libc::SYS_openat, 2, 3)];
    #[cfg(target_arch = "x86_64")]
    by_flags.push((libc::SYS_open, 1, 2));
    let creating = [bits(libc::O_CREAT), bits(libc::O_TMPFILE)];
    for (nr, flags_arg, mode_arg) in by_flags {
        let mut open_rules = Vec::new();
        for create in creating {
            for mode in modes {
                open_rules.push(rule(vec![
                    has_bit(flags_arg, create)?,
                    has_bit(mode_arg, mode)?,
                ])?);
            }
        }
        rules.insert(nr, open_rules);
    }
    Ok(())
}

/// RestrictNamespaces: no new namespace of any kind, and no joining one.
/// A nested user namespace gives back every capability inside it, and with
/// it AF_PACKET, netfilter and the kernel code only they reach.
pub(crate) fn namespaces(rules: &mut Rules) -> Result<(), String> {
    let clone_flags: Vec<u64> = CLONE_NEW_FLAGS.iter().map(|f| bits(*f)).collect();
    let mut unshare_flags = clone_flags.clone();
    unshare_flags.push(bits(libc::CLONE_NEWTIME));
    rules.insert(libc::SYS_unshare, any_bit(0, &unshare_flags)?);
    rules.insert(libc::SYS_clone, any_bit(0, &clone_flags)?);
    rules.insert(libc::SYS_setns, Vec::new());
    Ok(())
}

/// With the network off: no inet socket at all (the network namespace and
/// Landlock's TCP rules are the other two walls).
pub(crate) fn inet(rules: &mut Rules) -> Result<(), String> {
    rules.insert(
        libc::SYS_socket,
        any_value(0, &[libc::AF_INET, libc::AF_INET6])?,
    );
    Ok(())
}

/// `memfd_create(MFD_EXEC)`: an executable memory file, the usual way to
/// run a downloaded binary without writing it to disk.
pub(crate) fn memfd_exec(rules: &mut Rules) -> Result<(), String> {
    rules.insert(libc::SYS_memfd_create, any_bit(1, &[MFD_EXEC])?);
    Ok(())
}

/// The calls answered ENOSYS: their flags are out of a compare's reach.
pub(crate) fn unreadable_flags() -> Rules {
    [libc::SYS_clone3, libc::SYS_openat2]
        .into_iter()
        .map(|nr| (nr, Vec::new()))
        .collect()
}

/// RestrictAddressFamilies: `socket()` of any family but unix and inet
/// (answered EAFNOSUPPORT, as for a family the kernel lacks): netlink,
/// packet, vsock, alg (the kernel crypto API), bluetooth and the rest are
/// attack surface a tool never needs.
pub(crate) fn address_families() -> Result<Rules, String> {
    let conditions = ALLOWED_FAMILIES
        .iter()
        .map(|family| dword(0, SeccompCmpOp::Ne, bits(*family)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok([(libc::SYS_socket, vec![rule(conditions)?])]
        .into_iter()
        .collect())
}

/// One rule per value: the call matches when argument `index` is any of
/// `values`.
fn any_value(index: u8, values: &[libc::c_int]) -> Result<Vec<SeccompRule>, String> {
    values
        .iter()
        .map(|value| rule(vec![dword(index, SeccompCmpOp::Eq, bits(*value))?]))
        .collect()
}
