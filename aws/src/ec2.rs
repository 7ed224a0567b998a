//! EC2 reads of the export plan: every rule of one security group
//! (`DescribeSecurityGroupRules` filtered on `group-id`, docs/export.md, "Looking up a security-group ingress rule id"), page by
//! page ([`sg::PAGE_SIZE`] a page, at most [`sg::MAX_PAGES`] pages), each page retried
//! [`sg::THROTTLE_RETRIES`] times on throttling only. The answer is the lookup
//! `cdkd_core::export::sg` picks a rule from; a failure is classified there.

use aws_config::{Region, SdkConfig};
use aws_sdk_ec2::types::Filter;
use cdkd_core::export::sg::{self, SgLookup, SgRule};

use crate::calls::CallCounter;
use crate::sdk_error::ErrorClass;
use crate::sdk_message::readable;
use crate::throttle::{on_throttling, Backoff};

/// The EC2 client of one region.
#[derive(Debug, Clone)]
pub struct Ec2 {
    pub client: aws_sdk_ec2::Client,
    pub backoff: Backoff,
    /// `MaxResults` of a page ([`sg::PAGE_SIZE`]).
    pub page_size: i32,
    /// Pages read before the group counts as too large ([`sg::MAX_PAGES`]).
    pub max_pages: usize,
}

impl Ec2 {
    /// A client for `region` (the SDK's own region when `None`), counting its requests
    /// in `calls` when given.
    pub fn new(sdk: &SdkConfig, region: Option<&str>, calls: Option<&CallCounter>) -> Self {
        let mut b = aws_sdk_ec2::config::Builder::from(sdk);
        if let Some(r) = region {
            b = b.region(Region::new(r.to_string()));
        }
        if let Some(c) = calls {
            b = b.interceptor(c.clone());
        }
        Ec2 {
            client: aws_sdk_ec2::Client::from_conf(b.build()),
            backoff: Backoff {
                retries: sg::THROTTLE_RETRIES,
                ..Backoff::THROTTLED
            },
            page_size: sg::PAGE_SIZE,
            max_pages: sg::MAX_PAGES,
        }
    }

    /// Every rule of `group_id`: [`SgLookup::Rules`] when every page was read,
    /// [`SgLookup::TooManyPages`] when a next page remained after `max_pages` pages,
    /// [`SgLookup::Failed`] (classified) when a page could not be read.
    pub async fn security_group_rules(&self, group_id: &str) -> SgLookup {
        let mut rules = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..self.max_pages {
            let page = on_throttling(&self.backoff, || {
                self.client
                    .describe_security_group_rules()
                    .filters(Filter::builder().name("group-id").values(group_id).build())
                    .max_results(self.page_size)
                    .set_next_token(token.clone())
                    .send()
            })
            .await;
            let out = match page {
                Ok(out) => out,
                Err(f) => {
                    let code = aws_sdk_ec2::error::ProvideErrorMetadata::code(&f.error)
                        .unwrap_or("")
                        .to_string();
                    let message = readable(&f.error);
                    return SgLookup::Failed {
                        failure: sg::classify_failure(
                            &code,
                            &message,
                            f.class == ErrorClass::Throttling,
                        ),
                        message,
                    };
                }
            };
            rules.extend(out.security_group_rules().iter().map(|r| SgRule {
                rule_id: r.security_group_rule_id().map(str::to_string),
                is_egress: r.is_egress(),
                ip_protocol: r.ip_protocol().map(str::to_string),
                from_port: r.from_port().map(i64::from),
                to_port: r.to_port().map(i64::from),
            }));
            token = out
                .next_token()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            if token.is_none() {
                return SgLookup::Rules(rules);
            }
        }
        SgLookup::TooManyPages
    }
}
