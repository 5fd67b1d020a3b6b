//! Kernel events other than OOM kills that matter for a database host: user-space segfaults,
//! failed page allocations and hung tasks. Each is one line (a page allocation failure also
//! takes the pid from the CPU line that follows it).

use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::{u32 as dec_u32, u64 as dec_u64};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::{HungTask, PageAllocationFailure, Segfault};

/// `postgres[14643]: segfault at 0 ip 000055d4c6b5e1a0 sp 00007ffd1b2c3d40 error 4 in
/// postgres[55d4c6800000+7a2000] likely on CPU 3 (core 3, socket 0)`
/// `java[3071]: segfault at 0000000000000000 rip 00000000004a2a8e rsp 00007fffb0e1d4e8 error 4`
pub(crate) fn segfault(message: &str) -> Option<Segfault> {
    let at = memchr::memmem::find(message.as_bytes(), b"]: segfault at ")?;
    let head = &message[..at];
    let open = head.rfind('[')?;
    let pid: u32 = head[open + 1..].parse().ok()?;
    let comm = head[..open].trim_start();
    let rest = &message[at + "]: segfault at ".len()..];
    fn fields(i: &str) -> IResult<&str, (&str, &str, &str, u32)> {
        let word = || take_till1(|c| c == ' ');
        let (i, address) = word().parse(i)?;
        let (i, _) = (tag(" "), take_till1(|c| c == ' '), tag(" ")).parse(i)?; // ip / rip
        let (i, ip) = word().parse(i)?;
        let (i, _) = (tag(" "), take_till1(|c| c == ' '), tag(" ")).parse(i)?; // sp / rsp
        let (i, sp) = word().parse(i)?;
        let (i, _) = tag(" error ").parse(i)?;
        let (i, error) = dec_u32(i)?;
        Ok((i, (address, ip, sp, error)))
    }
    let (rest, (address, ip, sp, error)) = fields(rest).ok()?;
    let object = rest.strip_prefix(" in ").map(|o| {
        let end = o.find('[').or_else(|| o.find(' ')).unwrap_or(o.len());
        o[..end].to_owned()
    });
    Some(Segfault {
        comm: comm.to_owned(),
        pid,
        address: address.to_owned(),
        ip: ip.to_owned(),
        sp: sp.to_owned(),
        error,
        object,
    })
}

/// `kworker/u4:2: page allocation failure: order:0, mode:0x40cc0(GFP_KERNEL|__GFP_COMP),
/// nodemask=(null),cpuset=/,mems_allowed=0` and the older
/// `postgres: page allocation failure. order:4, mode:0x20`
pub(crate) fn page_allocation_failure(message: &str) -> Option<PageAllocationFailure> {
    let at = memchr::memmem::find(message.as_bytes(), b": page allocation failure")?;
    let comm = message[..at].trim_start();
    let rest = &message[at + ": page allocation failure".len()..];
    let rest = rest
        .strip_prefix(": ")
        .or_else(|| rest.strip_prefix(". "))?;
    fn order(i: &str) -> IResult<&str, u32> {
        preceded(tag("order:"), dec_u32).parse(i)
    }
    let (rest, order) = order(rest).ok()?;
    let mode = rest
        .strip_prefix(", mode:")
        .map(|m| m.split([',', ' ']).next().unwrap_or("").to_owned())
        .unwrap_or_default();
    Some(PageAllocationFailure {
        comm: comm.to_owned(),
        pid: None,
        order,
        mode,
    })
}

/// `INFO: task postgres:14643 blocked for more than 120 seconds.`
pub(crate) fn hung_task(message: &str) -> Option<HungTask> {
    let rest = message.trim_start().strip_prefix("INFO: task ")?;
    let at = rest.find(" blocked for more than ")?;
    let (comm, pid) = rest[..at].rsplit_once(':')?;
    let seconds_text = &rest[at + " blocked for more than ".len()..];
    let (_, seconds) = dec_u64::<&str, nom::error::Error<&str>>(seconds_text).ok()?;
    Some(HungTask {
        comm: comm.to_owned(),
        pid: pid.parse().ok()?,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segfault_forms() {
        let s = segfault("postgres[14643]: segfault at 0 ip 000055d4c6b5e1a0 sp 00007ffd1b2c3d40 error 4 in postgres[55d4c6800000+7a2000] likely on CPU 3 (core 3, socket 0)").unwrap();
        assert_eq!(
            (s.comm.as_str(), s.pid, s.address.as_str(), s.error),
            ("postgres", 14643, "0", 4)
        );
        assert_eq!(
            (s.ip.as_str(), s.sp.as_str(), s.object.as_deref()),
            ("000055d4c6b5e1a0", "00007ffd1b2c3d40", Some("postgres"))
        );
        let s = segfault("my prog[3071]: segfault at 0000000000000000 rip 00000000004a2a8e rsp 00007fffb0e1d4e8 error 6").unwrap();
        assert_eq!(
            (s.comm.as_str(), s.ip.as_str(), s.error, s.object),
            ("my prog", "00000000004a2a8e", 6, None)
        );
        assert!(segfault("postgres[x]: segfault at 0 ip 1 sp 2 error 4").is_none());
    }

    #[test]
    fn page_allocation_failure_forms() {
        let p = page_allocation_failure("kworker/u4:2: page allocation failure: order:0, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null),cpuset=/,mems_allowed=0").unwrap();
        assert_eq!(
            (p.comm.as_str(), p.order, p.mode.as_str()),
            ("kworker/u4:2", 0, "0x40cc0(GFP_KERNEL|__GFP_COMP)")
        );
        let p = page_allocation_failure("postgres: page allocation failure. order:4, mode:0x20")
            .unwrap();
        assert_eq!((p.order, p.mode.as_str()), (4, "0x20"));
    }

    #[test]
    fn hung_task_form() {
        let h = hung_task("INFO: task kworker/1:2:123 blocked for more than 120 seconds.").unwrap();
        assert_eq!(
            (h.comm.as_str(), h.pid, h.seconds),
            ("kworker/1:2", 123, 120)
        );
        assert!(hung_task("INFO: task x blocked").is_none());
    }
}
