//! `AWS::Events::Rule`: the physical id is the rule ARN
//! (`arn:…:events:<region>:<account>:rule/[<bus>/]<name>`) or, in older records, the rule
//! name with the bus in `properties.EventBusName` (default bus when absent). Removes every
//! target of the rule, then deletes it (docs/destroy.md, "SDK deleters"). A rule that DescribeRule reports
//! missing counts as gone only under the region guard.

use async_trait::async_trait;
use serde_json::Value;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{json_text, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

/// Most target ids one RemoveTargets call accepts.
const REMOVE_TARGETS_BATCH: usize = 100;

pub struct EventsRuleDeleter {
    events: aws_sdk_eventbridge::Client,
}

/// Where a rule lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleId {
    pub name: String,
    /// `None` for the default bus.
    pub bus: Option<String>,
    /// True when the id names the rule unambiguously (a well-formed rule ARN of the
    /// client's region, or a name whose bus is known from the record).
    pub identifies: bool,
}

/// The rule's name and bus, from the physical id and the record's `EventBusName`.
/// `None` when the physical id is neither a rule ARN nor a plain name.
/// An `EventBusName` that is recorded but not a string (an unresolved intrinsic) leaves the
/// bus unknown: the id then does not identify the rule.
pub fn rule_id(
    physical_id: &str,
    bus_property: Option<&Value>,
    region: Option<&str>,
) -> Option<RuleId> {
    if physical_id.starts_with("arn:") {
        let resource = physical_id.splitn(6, ':').nth(5)?;
        let path = resource.strip_prefix("rule/")?;
        let (bus, name) = match path.split_once('/') {
            Some((bus, name)) => (Some(bus.to_owned()), name),
            None => (None, path),
        };
        if name.is_empty() || name.contains('/') || bus.as_deref() == Some("") {
            return None;
        }
        let identifies = region.is_some_and(|r| guard::arn_in(physical_id, "events", r));
        return Some(RuleId {
            name: name.to_owned(),
            bus: bus.filter(|b| b != "default"),
            identifies,
        });
    }
    if physical_id.is_empty() || physical_id.contains('/') || physical_id.contains(':') {
        return None;
    }
    let (bus, identifies) = match bus_property {
        None | Some(Value::Null) => (None, true),
        Some(Value::String(s)) => {
            let b = bus_name_of(s);
            (
                (!b.is_empty() && b != "default").then(|| b.to_owned()),
                true,
            )
        }
        Some(_) => (None, false),
    };
    Some(RuleId {
        name: physical_id.to_owned(),
        bus,
        identifies,
    })
}

/// The bus name of an `EventBusName` value (a name or an event-bus ARN).
pub fn bus_name_of(value: &str) -> &str {
    if value.starts_with("arn:") {
        value
            .splitn(6, ':')
            .nth(5)
            .and_then(|r| r.strip_prefix("event-bus/"))
            .unwrap_or(value)
    } else {
        value
    }
}

impl EventsRuleDeleter {
    pub fn new(events: aws_sdk_eventbridge::Client) -> Self {
        EventsRuleDeleter { events }
    }

    fn region(&self) -> Option<&str> {
        self.events.config().region().map(|r| r.as_ref())
    }

    /// Every target id of the rule; `Ok(None)` when the rule does not exist.
    async fn target_ids(
        &self,
        req: &DeleteRequest,
        rule: &RuleId,
    ) -> Result<Option<Vec<String>>, DeleteError> {
        let mut ids = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = self
                .events
                .list_targets_by_rule()
                .rule(&rule.name)
                .set_event_bus_name(rule.bus.clone())
                .set_next_token(token.take())
                .send()
                .await;
            match out {
                Ok(out) => {
                    ids.extend(out.targets().iter().map(|t| t.id().to_owned()));
                    match out.next_token() {
                        Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                        _ => return Ok(Some(ids)),
                    }
                }
                Err(e) => {
                    let info = aws_error_info(&e);
                    if info.code_is(&["ResourceNotFoundException"]) {
                        return Ok(None);
                    }
                    return Err(DeleteError::from_aws(req, "ListTargetsByRule", &info));
                }
            }
        }
    }
}

impl SdkDeleter for EventsRuleDeleter {
    const TYPES: &'static [&'static str] = &["AWS::Events::Rule"];
}

#[async_trait]
impl Deleter for EventsRuleDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let region = self.region();
        let Some(rule) = rule_id(&req.physical_id, req.properties.get("EventBusName"), region)
        else {
            return Err(DeleteError::skipped(
                req,
                "the physical id is neither an Events rule ARN nor a rule name; nothing was deleted",
            ));
        };
        let on_bus = rule.bus.as_deref().unwrap_or("default");
        let missing = |what: &str| {
            guard::not_found(
                req,
                region,
                rule.identifies,
                &format!("EventBridge says rule {} on bus {on_bus} {what}", rule.name),
            )
        };
        // DescribeRule is the not-found check: DeleteRule succeeds for a missing rule.
        if let Err(e) = self
            .events
            .describe_rule()
            .name(&rule.name)
            .set_event_bus_name(rule.bus.clone())
            .send()
            .await
        {
            let info = aws_error_info(&e);
            if info.code_is(&["ResourceNotFoundException"]) {
                return missing("does not exist");
            }
            return Err(DeleteError::from_aws(req, "DescribeRule", &info));
        }
        let Some(ids) = self.target_ids(req, &rule).await? else {
            return missing("does not exist");
        };
        for batch in ids.chunks(REMOVE_TARGETS_BATCH) {
            let out = self
                .events
                .remove_targets()
                .rule(&rule.name)
                .set_event_bus_name(rule.bus.clone())
                .set_ids(Some(batch.to_vec()))
                .send()
                .await
                .map_err(|e| DeleteError::from_aws(req, "RemoveTargets", &aws_error_info(&e)))?;
            if out.failed_entry_count() > 0 {
                let failed: Vec<String> = out
                    .failed_entries()
                    .iter()
                    .map(|f| {
                        format!(
                            "{} ({})",
                            f.target_id().unwrap_or("?"),
                            f.error_message().unwrap_or("no reason given")
                        )
                    })
                    .collect();
                return Err(DeleteError::failed(
                    req,
                    format!(
                        "RemoveTargets could not remove {} target(s) of rule {}: {}",
                        failed.len(),
                        rule.name,
                        super::name_some(&failed)
                    ),
                )
                .retryable(true));
            }
        }
        match self
            .events
            .delete_rule()
            .name(&rule.name)
            .set_event_bus_name(rule.bus.clone())
            .send()
            .await
        {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    return missing("does not exist");
                }
                Err(DeleteError::from_aws(req, "DeleteRule", &info))
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): DescribeRule and ListTargetsByRule.

impl SdkReader for EventsRuleDeleter {
    const READS: &'static [&'static str] = &["AWS::Events::Rule"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[("AWS::Events::Rule", "Arn")];
}

impl EventsRuleDeleter {
    /// The rule `req` names and DescribeRule's answer for it; `None` when it does not
    /// exist.
    async fn describe(
        &self,
        req: &ReadRequest,
    ) -> Result<
        Option<(
            RuleId,
            aws_sdk_eventbridge::operation::describe_rule::DescribeRuleOutput,
        )>,
        ReadError,
    > {
        let Some(rule) = rule_id(
            &req.physical_id,
            req.properties.get("EventBusName"),
            self.region(),
        ) else {
            return Err(ReadError::Unsupported(format!(
                "{} is neither a rule ARN nor a rule name",
                req.physical_id
            )));
        };
        let sent = self
            .events
            .describe_rule()
            .name(&rule.name)
            .set_event_bus_name(rule.bus.clone())
            .send()
            .await;
        Ok(found("DescribeRule", &["ResourceNotFoundException"], sent)?.map(|d| (rule, d)))
    }
}

#[async_trait]
impl Reader for EventsRuleDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some((rule, d)) = self.describe(req).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Name", d.name());
        p.opt("Description", d.description().filter(|s| !s.is_empty()));
        p.opt("EventBusName", rule.bus.as_deref());
        p.opt("EventPattern", d.event_pattern().map(json_text));
        p.opt("ScheduleExpression", d.schedule_expression());
        p.opt("State", d.state().map(|s| s.as_str()));
        p.opt("RoleArn", d.role_arn());
        let mut targets = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = answered(
                "ListTargetsByRule",
                self.events
                    .list_targets_by_rule()
                    .rule(&rule.name)
                    .set_event_bus_name(rule.bus.clone())
                    .set_next_token(token.take())
                    .send()
                    .await,
            )?;
            for t in out.targets() {
                let mut tp = Props::new();
                tp.set("Id", t.id());
                tp.set("Arn", t.arn());
                tp.opt("RoleArn", t.role_arn());
                tp.opt("Input", t.input());
                tp.opt("InputPath", t.input_path());
                targets.push(tp.build());
            }
            match out.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                _ => break,
            }
        }
        p.nonempty("Targets", Value::Array(targets));
        Ok(Some(p.build()))
    }

    /// DescribeRule: Arn.
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some((_, d)) = self.describe(req).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Arn", d.arn());
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rule_arn_on_a_custom_bus_gives_name_and_bus() {
        assert_eq!(
            rule_id(
                "arn:aws:events:us-east-1:123:rule/my-bus/my-rule",
                None,
                Some("us-east-1")
            ),
            Some(RuleId {
                name: "my-rule".into(),
                bus: Some("my-bus".into()),
                identifies: true
            })
        );
    }

    #[test]
    fn rule_arn_on_the_default_bus_has_no_bus() {
        assert_eq!(
            rule_id(
                "arn:aws:events:us-east-1:123:rule/r",
                None,
                Some("us-east-1")
            ),
            Some(RuleId {
                name: "r".into(),
                bus: None,
                identifies: true
            })
        );
    }

    #[test]
    fn rule_arn_of_another_region_does_not_identify_the_rule() {
        let id = rule_id(
            "arn:aws:events:eu-west-1:123:rule/r",
            None,
            Some("us-east-1"),
        )
        .unwrap();
        assert!(!id.identifies);
    }

    #[test]
    fn rule_name_takes_its_bus_from_the_recorded_event_bus_name() {
        let arn = json!("arn:aws:events:us-east-1:123:event-bus/b");
        assert_eq!(
            rule_id("r", Some(&arn), Some("us-east-1"))
                .unwrap()
                .bus
                .as_deref(),
            Some("b")
        );
        let b = json!("b");
        assert_eq!(
            rule_id("r", Some(&b), None).unwrap().bus.as_deref(),
            Some("b")
        );
        let d = json!("default");
        assert_eq!(rule_id("r", Some(&d), None).unwrap().bus, None);
        assert_eq!(rule_id("r", None, None).unwrap().bus, None);
    }

    #[test]
    fn rule_name_with_an_unresolved_event_bus_name_does_not_identify_the_rule() {
        let unresolved = json!({"Ref": "Bus"});
        let id = rule_id("r", Some(&unresolved), Some("us-east-1")).unwrap();
        assert!(!id.identifies);
    }

    #[test]
    fn malformed_rule_ids_are_refused() {
        assert_eq!(
            rule_id("arn:aws:events:us-east-1:123:event-bus/b", None, None),
            None
        );
        assert_eq!(rule_id("a/b", None, None), None);
        assert_eq!(rule_id("", None, None), None);
    }
}
