//! The AWS::EC2::SecurityGroupIngress rule-id lookup (docs/export.md, "Looking up a security-group ingress rule id"): when a row
//! has no usable recorded rule id, the caller lists the group's rules
//! (`DescribeSecurityGroupRules`, filter `group-id`, [`PAGE_SIZE`] per page, at most
//! [`MAX_PAGES`] pages, each page retried [`THROTTLE_RETRIES`] times on throttling only,
//! once per group per plan) and hands them in; this module parses the row's physical id
//! and picks the rule.

use std::collections::BTreeMap;

pub const PAGE_SIZE: i32 = 1000;
pub const MAX_PAGES: usize = 20;
pub const THROTTLE_RETRIES: u32 = 4;

/// `groupId|ipProtocol|fromPort|toPort`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgTuple {
    pub group_id: String,
    pub protocol: String,
    pub from_port: i64,
    pub to_port: i64,
}

/// One rule as `DescribeSecurityGroupRules` returns it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SgRule {
    pub rule_id: Option<String>,
    pub is_egress: Option<bool>,
    pub ip_protocol: Option<String>,
    pub from_port: Option<i64>,
    pub to_port: Option<i64>,
}

/// Why the lookup could not list the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SgFailure {
    /// AccessDenied / UnauthorizedOperation / AuthFailure / "not authorized to perform".
    Auth,
    /// Still throttled after the retries.
    Throttled,
    Other,
}

/// What the caller learned about one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SgLookup {
    /// Every page was read.
    Rules(Vec<SgRule>),
    /// NextToken was still set after [`MAX_PAGES`] pages.
    TooManyPages,
    Failed {
        failure: SgFailure,
        message: String,
    },
}

/// Classifies a failed call from its error code and message (case-insensitive).
/// `throttled` is the caller's own verdict (it already retried).
pub fn classify_failure(code: &str, message: &str, throttled: bool) -> SgFailure {
    if throttled {
        return SgFailure::Throttled;
    }
    let text = format!("{code} {message}").to_ascii_lowercase();
    if [
        "accessdenied",
        "unauthorizedoperation",
        "authfailure",
        "not authorized to perform",
    ]
    .iter()
    .any(|p| text.contains(p))
    {
        SgFailure::Auth
    } else {
        SgFailure::Other
    }
}

/// A usable recorded or returned rule id: `^sgr-[0-9a-f]+$` after trimming.
pub fn usable_rule_id(s: &str) -> Option<&str> {
    let t = crate::text::js_trim(s);
    t.strip_prefix("sgr-")
        .filter(|r| {
            !r.is_empty()
                && r.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        .map(|_| t)
}

/// Why the rule id of a security-group ingress row could not be found, as data
/// (`core::view::blocked` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SgError {
    /// The physical id is not `groupId|ipProtocol|fromPort|toPort`.
    Unreadable { physical_id: String },
    /// The group's rules did not fit in [`MAX_PAGES`] pages.
    TooManyPages { group_id: String },
    /// Listing the group's rules failed.
    ListFailed {
        group_id: String,
        failure: SgFailure,
        message: String,
    },
    /// A matching rule has no usable `sgr-` id: `unusable` the ids AWS gave them
    /// (`None`: absent), `usable` the readable candidates; `ambiguous` when more than
    /// one rule matches.
    UnusableIds {
        tuple: SgTuple,
        unusable: Vec<Option<String>>,
        usable: Vec<String>,
        ambiguous: bool,
    },
    /// No ingress rule matches the tuple.
    NoMatch { tuple: SgTuple },
    /// Several ingress rules match (their ids).
    Ambiguous {
        tuple: SgTuple,
        rule_ids: Vec<String>,
    },
}

/// Parses the physical id; refuses (without any AWS call) a shape it cannot read.
pub fn parse_physical_id(physical_id: &str) -> Result<SgTuple, SgError> {
    let bad = || SgError::Unreadable {
        physical_id: physical_id.to_string(),
    };
    let parts: Vec<&str> = crate::text::js_trim(physical_id).split('|').collect();
    let [g, p, f, t] = parts.as_slice() else {
        return Err(bad());
    };
    let port = |s: &str| -> Option<i64> {
        let s = crate::text::js_trim(s);
        if s.is_empty() {
            return None;
        }
        s.parse::<i64>().ok()
    };
    if crate::text::js_trim(g).is_empty() || crate::text::js_trim(p).is_empty() {
        return Err(bad());
    }
    match (port(f), port(t)) {
        (Some(from_port), Some(to_port)) => Ok(SgTuple {
            group_id: crate::text::js_trim(g).to_string(),
            protocol: crate::text::js_trim(p).to_string(),
            from_port,
            to_port,
        }),
        _ => Err(bad()),
    }
}

/// `1`→icmp, `6`→tcp, `17`→udp, `58`→icmpv6, names lower-cased, others verbatim.
pub fn canonical_protocol(p: &str) -> String {
    match p {
        "1" => "icmp".into(),
        "6" => "tcp".into(),
        "17" => "udp".into(),
        "58" => "icmpv6".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// Picks the rule for `tuple` from the group's lookup: exactly one matching ingress rule
/// with a usable id is adopted; every other outcome refuses, naming the candidates.
pub fn pick_rule(tuple: &SgTuple, lookup: &SgLookup) -> Result<String, SgError> {
    let rules = match lookup {
        SgLookup::Rules(r) => r,
        SgLookup::TooManyPages => {
            return Err(SgError::TooManyPages {
                group_id: tuple.group_id.clone(),
            })
        }
        SgLookup::Failed { failure, message } => {
            return Err(SgError::ListFailed {
                group_id: tuple.group_id.clone(),
                failure: *failure,
                message: message.clone(),
            });
        }
    };
    let want = canonical_protocol(&tuple.protocol);
    let matching: Vec<&SgRule> = rules
        .iter()
        .filter(|r| r.is_egress != Some(true))
        .filter(|r| {
            r.ip_protocol.as_deref().map(canonical_protocol).as_deref() == Some(want.as_str())
        })
        .filter(|r| {
            r.from_port.unwrap_or(-1) == tuple.from_port && r.to_port.unwrap_or(-1) == tuple.to_port
        })
        .collect();
    let usable: Vec<&str> = matching
        .iter()
        .filter_map(|r| r.rule_id.as_deref().and_then(usable_rule_id))
        .collect();
    if usable.len() < matching.len() {
        return Err(SgError::UnusableIds {
            tuple: tuple.clone(),
            unusable: matching
                .iter()
                .filter(|r| r.rule_id.as_deref().and_then(usable_rule_id).is_none())
                .map(|r| r.rule_id.clone())
                .collect(),
            usable: usable.iter().map(|s| s.to_string()).collect(),
            ambiguous: matching.len() > 1,
        });
    }
    match usable.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(SgError::NoMatch {
            tuple: tuple.clone(),
        }),
        many => Err(SgError::Ambiguous {
            tuple: tuple.clone(),
            rule_ids: many.iter().map(|s| s.to_string()).collect(),
        }),
    }
}

/// The distinct groups a set of tuples needs listed (one lookup per group per plan).
pub fn groups_to_list<'a>(tuples: impl IntoIterator<Item = &'a SgTuple>) -> Vec<String> {
    let mut m = BTreeMap::new();
    for t in tuples {
        m.insert(t.group_id.clone(), ());
    }
    m.into_keys().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: Option<&str>, proto: &str, from: i64, to: i64, egress: Option<bool>) -> SgRule {
        SgRule {
            rule_id: id.map(str::to_string),
            is_egress: egress,
            ip_protocol: Some(proto.into()),
            from_port: Some(from),
            to_port: Some(to),
        }
    }

    fn tuple() -> SgTuple {
        parse_physical_id("sg-1|6|443|443").unwrap()
    }

    #[test]
    fn statement_44_exactly_one_matching_rule_is_adopted() {
        let l = SgLookup::Rules(vec![
            rule(Some("sgr-0a"), "tcp", 443, 443, None),
            rule(Some("sgr-0b"), "tcp", 80, 80, None),
        ]);
        assert_eq!(pick_rule(&tuple(), &l), Ok("sgr-0a".into()));
    }

    #[test]
    fn statement_45_two_matches_across_pages_refuse_listing_both() {
        // The caller hands in every page; two matches refuse.
        let l = SgLookup::Rules(vec![
            rule(Some("sgr-0a"), "tcp", 443, 443, None),
            rule(Some("sgr-0b"), "tcp", 443, 443, None),
        ]);
        assert_eq!(
            pick_rule(&tuple(), &l),
            Err(SgError::Ambiguous {
                tuple: tuple(),
                rule_ids: vec!["sgr-0a".into(), "sgr-0b".into()],
            })
        );
    }

    #[test]
    fn statement_46_unparsable_physical_id_refuses_without_aws() {
        assert!(parse_physical_id("sg-1|tcp||443").is_err());
        assert!(parse_physical_id("sg-1|tcp|443").is_err());
        assert!(parse_physical_id("|tcp|1|2").is_err());
        assert_eq!(parse_physical_id("sg-1|-1|-1|-1").unwrap().from_port, -1);
    }

    #[test]
    fn statement_47_protocol_number_matches_its_name() {
        let l = SgLookup::Rules(vec![rule(Some("sgr-0a"), "TCP", 443, 443, None)]);
        assert_eq!(pick_rule(&tuple(), &l), Ok("sgr-0a".into()));
        assert_eq!(canonical_protocol("58"), "icmpv6");
    }

    #[test]
    fn statement_48_egress_twin_is_ignored() {
        let l = SgLookup::Rules(vec![
            rule(Some("sgr-0e"), "tcp", 443, 443, Some(true)),
            rule(Some("sgr-0c1"), "tcp", 443, 443, Some(false)),
        ]);
        assert_eq!(pick_rule(&tuple(), &l), Ok("sgr-0c1".into()));
    }

    #[test]
    fn statement_49_a_match_without_rule_id_refuses_with_the_readable_candidate() {
        let l = SgLookup::Rules(vec![
            rule(None, "tcp", 443, 443, None),
            rule(Some("sgr-0b"), "tcp", 443, 443, None),
        ]);
        assert_eq!(
            pick_rule(&tuple(), &l),
            Err(SgError::UnusableIds {
                tuple: tuple(),
                unusable: vec![None],
                usable: vec!["sgr-0b".into()],
                ambiguous: true,
            })
        );
    }

    #[test]
    fn statement_50_throttled_lookup_is_reported_as_throttling_not_permission() {
        assert_eq!(
            classify_failure("RequestLimitExceeded", "Rate exceeded", true),
            SgFailure::Throttled
        );
        let l = SgLookup::Failed {
            failure: SgFailure::Throttled,
            message: "Rate exceeded".into(),
        };
        assert_eq!(
            pick_rule(&tuple(), &l),
            Err(SgError::ListFailed {
                group_id: "sg-1".into(),
                failure: SgFailure::Throttled,
                message: "Rate exceeded".into(),
            })
        );
        assert_eq!(THROTTLE_RETRIES, 4);
        assert_eq!(
            classify_failure("UnauthorizedOperation", "x", false),
            SgFailure::Auth
        );
        assert_eq!(
            classify_failure(
                "X",
                "User is not authorized to perform: ec2:Describe",
                false
            ),
            SgFailure::Auth
        );
    }

    #[test]
    fn statement_51_ten_rows_on_one_group_list_it_once() {
        let ts: Vec<SgTuple> = (0..10)
            .map(|i| parse_physical_id(&format!("sg-1|tcp|{i}|{i}")).unwrap())
            .collect();
        assert_eq!(groups_to_list(&ts), ["sg-1"]);
    }

    #[test]
    fn statement_52_more_than_twenty_pages_refuses() {
        assert_eq!(MAX_PAGES, 20);
        assert_eq!(
            pick_rule(&tuple(), &SgLookup::TooManyPages),
            Err(SgError::TooManyPages {
                group_id: "sg-1".into()
            })
        );
    }

    #[test]
    fn zero_matches_refuse_naming_the_tuple() {
        assert_eq!(
            pick_rule(&tuple(), &SgLookup::Rules(vec![])),
            Err(SgError::NoMatch { tuple: tuple() })
        );
    }
}
