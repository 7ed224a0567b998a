//! `AWS::Events::EventBus`: the physical id is the bus name (an event-bus ARN also works).
//!
//! cdkd deletes every rule on the bus, even rules that are not its stack's (docs/destroy.md, "SDK deleters").
//! cdkd-flow takes the safer course: the rules this state records are deleted
//! before the bus by the implicit ordering rule, so any rule still on the bus is not this
//! stack's; the bus deleter then fails naming those rules and deletes nothing. The
//! `default` bus is never deleted.

use async_trait::async_trait;

use super::events_rule::bus_name_of;
use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct EventBusDeleter {
    events: aws_sdk_eventbridge::Client,
}

/// A custom bus name: 1-256 of letters, digits, `.`, `-`, `_`, `/` (partner buses carry
/// `aws.partner/…`).
pub fn is_bus_name(name: &str) -> bool {
    (1..=256).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'))
}

/// The failure message for a bus that still has rules this state does not record.
pub fn foreign_rules_message(bus: &str, rules: &[String]) -> String {
    format!(
        "event bus {bus} still has {} rule(s) that this stack's state does not record: {}; \
         cdkd-flow deletes only the rules it recorded and leaves these in place, so the bus was \
         not deleted (delete or move those rules, then run the destroy again)",
        rules.len(),
        super::name_some(&quoted(rules))
    )
}

/// Names from AWS are untrusted text: quoted with escapes.
fn quoted(items: &[String]) -> Vec<String> {
    items.iter().map(|s| format!("{s:?}")).collect()
}

impl EventBusDeleter {
    pub fn new(events: aws_sdk_eventbridge::Client) -> Self {
        EventBusDeleter { events }
    }

    fn region(&self) -> Option<&str> {
        self.events.config().region().map(|r| r.as_ref())
    }

    /// Names of every rule on the bus; `Ok(None)` when the bus does not exist.
    async fn rule_names(
        &self,
        req: &DeleteRequest,
        bus: &str,
    ) -> Result<Option<Vec<String>>, DeleteError> {
        let mut names = Vec::new();
        let mut token: Option<String> = None;
        loop {
            match self
                .events
                .list_rules()
                .event_bus_name(bus)
                .set_next_token(token.take())
                .send()
                .await
            {
                Ok(out) => {
                    names.extend(
                        out.rules()
                            .iter()
                            .filter_map(|r| r.name().map(str::to_owned)),
                    );
                    match out.next_token() {
                        Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                        _ => return Ok(Some(names)),
                    }
                }
                Err(e) => {
                    let info = aws_error_info(&e);
                    if info.code_is(&["ResourceNotFoundException"]) {
                        return Ok(None);
                    }
                    return Err(DeleteError::from_aws(req, "ListRules", &info));
                }
            }
        }
    }
}

impl SdkDeleter for EventBusDeleter {
    const TYPES: &'static [&'static str] = &["AWS::Events::EventBus"];
}

#[async_trait]
impl Deleter for EventBusDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let region = self.region();
        let id = req.physical_id.as_str();
        let bus = bus_name_of(id);
        let identifies = if id.starts_with("arn:") {
            region.is_some_and(|r| guard::arn_in(id, "events", r))
        } else {
            true
        } && is_bus_name(bus);
        if bus == "default" || bus.is_empty() {
            return Err(DeleteError::failed(
                req,
                "refusing to delete the default event bus: it belongs to the account, not to this stack",
            ));
        }
        let Some(rules) = self.rule_names(req, bus).await? else {
            return guard::not_found(
                req,
                region,
                identifies,
                &format!("EventBridge says event bus {bus} does not exist"),
            );
        };
        if !rules.is_empty() {
            return Err(DeleteError::failed(req, foreign_rules_message(bus, &rules)));
        }
        match self.events.delete_event_bus().name(bus).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    return guard::not_found(
                        req,
                        region,
                        identifies,
                        &format!("EventBridge says event bus {bus} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteEventBus", &info))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eventbus_with_unrecorded_rules_message_names_the_bus_a_few_rules_and_the_count() {
        let rules: Vec<String> = (1..=7).map(|i| format!("rule-{i}")).collect();
        let msg = foreign_rules_message("orders", &rules);
        assert_eq!(
            msg,
            "event bus orders still has 7 rule(s) that this stack's state does not record: \
             \"rule-1\", \"rule-2\", \"rule-3\", \"rule-4\", \"rule-5\" (and 2 more); cdkd-flow \
             deletes only the rules it recorded and leaves these in place, so the bus was not \
             deleted (delete or move those rules, then run the destroy again)"
        );
    }

    #[test]
    fn bus_names_allow_partner_buses_and_refuse_other_characters() {
        assert!(is_bus_name("orders"));
        assert!(is_bus_name("aws.partner/saas.com/123/events"));
        assert!(!is_bus_name(""));
        assert!(!is_bus_name("bad name"));
    }
}
