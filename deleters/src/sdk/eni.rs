//! Sweeping the network interfaces that VPC Lambda functions leave behind (docs/destroy.md, "SDK deleters":
//! `AWS::Lambda::Function` with `VpcConfig`, `AWS::EC2::SecurityGroup`), and the deadline
//! arithmetic of deletes that wait for them across wave invocations.
//!
//! Only interfaces whose description marks them as Lambda's (`AWS Lambda VPC ENI…`) and
//! whose status is `available` are deleted; an interface in use is never touched.

use aws_sdk_ec2::types::{Filter, NetworkInterfaceStatus};

use crate::error::{aws_error_info, AwsErrorInfo};

/// The description prefix of every network interface Lambda creates for a VPC function.
pub const LAMBDA_ENI_PREFIX: &str = "AWS Lambda VPC ENI";

/// True when the description marks a Lambda-created interface (any function).
pub fn is_lambda_eni(description: &str) -> bool {
    description.starts_with(LAMBDA_ENI_PREFIX)
}

/// True when the description marks an interface Lambda created for `function_name`:
/// `AWS Lambda VPC ENI-<name>` followed by nothing or by `-…`. (Another function whose
/// name merely starts with `<name>` but continues with something else than `-` does not
/// match.)
pub fn is_function_eni(description: &str, function_name: &str) -> bool {
    if function_name.is_empty() {
        return false;
    }
    let Some(rest) = description.strip_prefix(LAMBDA_ENI_PREFIX) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix('-') else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(function_name) else {
        return false;
    };
    rest.is_empty() || rest.starts_with('-')
}

/// The function name of a Lambda physical id: the id itself, or the name part of a
/// function ARN (`arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`).
pub fn function_name_of(id: &str) -> &str {
    if !id.starts_with("arn:") {
        return id;
    }
    let mut parts = id.split(':');
    // arn, partition, service, region, account, "function", name
    match (parts.nth(5), parts.next()) {
        (Some("function"), Some(name)) if !name.is_empty() => name,
        _ => id,
    }
}

/// One network interface as the sweep saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EniSummary {
    pub id: String,
    pub status: String,
    pub description: String,
}

impl EniSummary {
    /// `eni-1 (in-use, "AWS Lambda VPC ENI-fn-…")`; the description is quoted with escapes
    /// (it comes from AWS, so it is untrusted text).
    pub fn describe(&self) -> String {
        format!("{} ({}, {:?})", self.id, self.status, self.description)
    }
}

/// What one sweep pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Interfaces deleted by this pass (or found already gone when deleting them).
    pub deleted: Vec<String>,
    /// Matching interfaces that are still there (in use, or their delete was refused for
    /// a reason worth retrying).
    pub remaining: Vec<EniSummary>,
    /// Interfaces the filter found that do not match (not Lambda's, or another
    /// function's).
    pub others: Vec<EniSummary>,
}

/// A failed AWS call of a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepError {
    pub action: &'static str,
    pub info: AwsErrorInfo,
}

/// Lists the interfaces matching the EC2 filter `filter_name = values`, deletes those
/// that `matches` (by description) and that are `available`, and reports the rest. A
/// delete refused for a retryable reason leaves the interface in `remaining`; any other
/// failure ends the pass with an error.
pub async fn sweep(
    ec2: &aws_sdk_ec2::Client,
    filter_name: &str,
    values: &[String],
    matches: impl Fn(&str) -> bool,
) -> Result<Sweep, SweepError> {
    let interfaces = describe(ec2, filter_name, values).await?;
    let mut out = Sweep::default();
    for eni in interfaces {
        if !matches(&eni.description) {
            out.others.push(eni);
            continue;
        }
        if eni.status != NetworkInterfaceStatus::Available.as_str() {
            out.remaining.push(eni);
            continue;
        }
        match ec2
            .delete_network_interface()
            .network_interface_id(&eni.id)
            .send()
            .await
        {
            Ok(_) => out.deleted.push(eni.id),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["InvalidNetworkInterfaceID.NotFound"]) {
                    out.deleted.push(eni.id);
                } else if info.retryable
                    || info.code_is(&["InvalidNetworkInterface.InUse", "DependencyViolation"])
                {
                    out.remaining.push(eni);
                } else {
                    return Err(SweepError {
                        action: "DeleteNetworkInterface",
                        info,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Every interface matching the filter (all pages).
async fn describe(
    ec2: &aws_sdk_ec2::Client,
    filter_name: &str,
    values: &[String],
) -> Result<Vec<EniSummary>, SweepError> {
    let filter = Filter::builder()
        .name(filter_name)
        .set_values(Some(values.to_vec()))
        .build();
    let mut pages = ec2
        .describe_network_interfaces()
        .filters(filter)
        .into_paginator()
        .send();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| SweepError {
            action: "DescribeNetworkInterfaces",
            info: aws_error_info(&e),
        })?;
        for ni in page.network_interfaces() {
            let Some(id) = ni.network_interface_id() else {
                continue;
            };
            out.push(EniSummary {
                id: id.to_owned(),
                status: ni
                    .status()
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_default(),
                description: ni.description().unwrap_or_default().to_owned(),
            });
        }
    }
    Ok(out)
}

/// The deadline of a delete that started at `started_ms` with a budget of `budget_ms`.
pub fn deadline_ms(started_ms: u64, budget_ms: u64) -> u64 {
    started_ms.saturating_add(budget_ms)
}

/// True once the budget is spent (strictly after the deadline).
pub fn past_deadline(now_ms: u64, deadline_ms: u64) -> bool {
    now_ms > deadline_ms
}

/// When to look again: `delay_ms` from now, but never later than just after the deadline
/// (so the give-up decision is not postponed by a long back-off).
pub fn next_poll_ms(now_ms: u64, delay_ms: u64, deadline_ms: u64) -> u64 {
    let at = now_ms.saturating_add(delay_ms);
    if now_ms <= deadline_ms {
        at.min(deadline_ms.saturating_add(1))
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_eni_is_recognised_by_its_description_prefix() {
        assert!(is_lambda_eni("AWS Lambda VPC ENI-fn-1234"));
        assert!(is_lambda_eni("AWS Lambda VPC ENI"));
        assert!(!is_lambda_eni("aws lambda vpc eni-fn"));
        assert!(!is_lambda_eni("ELB app/my-lb/123"));
        assert!(!is_lambda_eni(""));
    }

    #[test]
    fn function_eni_matches_only_that_functions_name_followed_by_a_dash_or_the_end() {
        assert!(is_function_eni(
            "AWS Lambda VPC ENI-my-fn-3f2a9c1e-1111-2222-3333-444455556666",
            "my-fn"
        ));
        assert!(is_function_eni("AWS Lambda VPC ENI-my-fn", "my-fn"));
        assert!(!is_function_eni("AWS Lambda VPC ENI-my-fnx-123", "my-fn"));
        assert!(!is_function_eni("AWS Lambda VPC ENI-other-123", "my-fn"));
        assert!(!is_function_eni("Some ENI-my-fn-123", "my-fn"));
        assert!(!is_function_eni("AWS Lambda VPC ENI-", ""));
    }

    #[test]
    fn function_name_of_an_arn_is_its_name_part_without_qualifier() {
        assert_eq!(
            function_name_of("arn:aws:lambda:us-east-1:123:function:my-fn"),
            "my-fn"
        );
        assert_eq!(
            function_name_of("arn:aws:lambda:us-east-1:123:function:my-fn:live"),
            "my-fn"
        );
        assert_eq!(function_name_of("my-fn"), "my-fn");
        assert_eq!(
            function_name_of("arn:aws:s3:::bucket"),
            "arn:aws:s3:::bucket"
        );
    }

    #[test]
    fn eni_description_in_messages_is_quoted_with_escapes() {
        let e = EniSummary {
            id: "eni-1".into(),
            status: "in-use".into(),
            description: "AWS Lambda VPC ENI-fn\u{1b}[31m".into(),
        };
        assert_eq!(
            e.describe(),
            "eni-1 (in-use, \"AWS Lambda VPC ENI-fn\\u{1b}[31m\")"
        );
    }

    #[test]
    fn deadline_is_start_plus_budget_and_is_passed_only_after_it() {
        let d = deadline_ms(1_000, 30 * 60 * 1000);
        assert_eq!(d, 1_801_000);
        assert!(!past_deadline(1_801_000, d));
        assert!(past_deadline(1_801_001, d));
        assert_eq!(deadline_ms(u64::MAX - 1, 10), u64::MAX);
    }

    #[test]
    fn next_poll_never_lands_later_than_just_after_the_deadline() {
        assert_eq!(next_poll_ms(1_000, 15_000, 100_000), 16_000);
        assert_eq!(next_poll_ms(95_000, 15_000, 100_000), 100_001);
        assert_eq!(next_poll_ms(200_000, 15_000, 100_000), 215_000);
    }
}
