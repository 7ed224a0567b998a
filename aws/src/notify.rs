//! Publishing a run's message (docs/notifications.md): `sns:Publish` to a topic and
//! `events:PutEvents` to a bus, whichever are configured. The one publisher of the steps
//! (deployed and `--local`); what a message says is `cdkd_core::notify`'s.
//!
//! A message that cannot be sent never fails anything: [`Notifier::publish`] returns
//! the failures, one line each, for the caller to warn about.

use aws_config::{Region, SdkConfig};
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_sdk_sns::types::MessageAttributeValue;
use cdkd_core::notify::{Notice, SOURCE};
use cdkd_core::text::flatten_str;

use crate::sdk_message::readable;

/// The topic ARN the steps publish to (set by the template; the CLI's
/// `--notify-topic`).
pub const TOPIC_ENV: &str = "CDKD_FLOW_NOTIFY_TOPIC";
/// The event bus (name or ARN) the steps put events on (the CLI's `--notify-bus`).
pub const BUS_ENV: &str = "CDKD_FLOW_NOTIFY_BUS";

/// Where messages go, with a client for each.
#[derive(Clone, Debug)]
pub struct Notifier {
    topic: Option<(String, aws_sdk_sns::Client)>,
    bus: Option<(String, aws_sdk_eventbridge::Client)>,
}

/// The region field of an ARN (`arn:aws:sns:eu-west-1:123456789012:name`).
fn arn_region(arn: &str) -> Option<&str> {
    let mut parts = arn.split(':');
    (parts.next() == Some("arn"))
        .then(|| parts.nth(2))
        .flatten()
        .filter(|r| !r.is_empty())
}

/// A FIFO topic (`....fifo`) refuses a message without a group: the run's messages form
/// one group, in order; each tell is its own message (a resumed run may tell the same
/// kind again within the topic's five-minute deduplication window), so its
/// deduplication id is the kind, the run and the time. Both within SNS's 128
/// characters. `None` for a standard topic.
fn fifo_ids(topic_arn: &str, n: &Notice, now_ms: i64) -> Option<(String, String)> {
    if !topic_arn.ends_with(".fifo") {
        return None;
    }
    let keep = |c: &char| c.is_ascii_alphanumeric() || "-_.".contains(*c);
    let run: String = n.run_id.chars().filter(keep).take(80).collect();
    let group = if run.is_empty() {
        "cdkd-flow".to_string()
    } else {
        run.clone()
    };
    Some((group, format!("{}-{run}-{now_ms}", n.kind.as_str())))
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Notifier {
    /// A publisher to `topic` (an SNS topic ARN) and `bus` (an event bus name or ARN);
    /// `None` when neither is given. Each client works in its target's region when the
    /// ARN names one.
    pub fn new(sdk: &SdkConfig, topic: Option<String>, bus: Option<String>) -> Option<Notifier> {
        let topic = nonempty(topic).map(|t| {
            let mut b = aws_sdk_sns::config::Builder::from(sdk);
            if let Some(r) = arn_region(&t) {
                b = b.region(Region::new(r.to_string()));
            }
            let client = aws_sdk_sns::Client::from_conf(b.build());
            (t, client)
        });
        let bus = nonempty(bus).map(|name| {
            let mut b = aws_sdk_eventbridge::config::Builder::from(sdk);
            if let Some(r) = arn_region(&name) {
                b = b.region(Region::new(r.to_string()));
            }
            let client = aws_sdk_eventbridge::Client::from_conf(b.build());
            (name, client)
        });
        (topic.is_some() || bus.is_some()).then_some(Notifier { topic, bus })
    }

    /// [`Notifier::new`] from [`TOPIC_ENV`] and [`BUS_ENV`] (what a Lambda step gets
    /// from the template).
    pub fn from_env(sdk: &SdkConfig) -> Option<Notifier> {
        Notifier::new(
            sdk,
            std::env::var(TOPIC_ENV).ok(),
            std::env::var(BUS_ENV).ok(),
        )
    }

    /// Sends `n` to every target: the topic gets the subject and text of
    /// `cdkd_core::view::notify` with the attributes `kind`, `operation`, `outcome`,
    /// `runId` (and `stack`); the bus gets an event of source `cdkd-flow`, the kind's
    /// detail type and `n` as its detail. Returns what could not be sent, one line each.
    pub async fn publish(&self, n: &Notice) -> Vec<String> {
        let mut failures = Vec::new();
        if let Some((arn, sns)) = &self.topic {
            let mut req = sns
                .publish()
                .topic_arn(arn)
                .subject(cdkd_core::view::notify::subject(n))
                .message(cdkd_core::view::notify::body(n));
            if let Some((group, dedup)) = fifo_ids(arn, n, crate::store::now_ms()) {
                req = req.message_group_id(group).message_deduplication_id(dedup);
            }
            let mut attrs = vec![
                ("kind", n.kind.as_str().to_string()),
                ("operation", n.operation.to_string()),
                ("outcome", n.outcome.to_string()),
                ("runId", n.run_id.as_str().to_string()),
            ];
            if let Some(s) = &n.stack {
                attrs.push(("stack", s.clone()));
            }
            // One line each (SNS refuses a whole message over a control character).
            let attrs = attrs.into_iter().map(|(k, v)| (k, flatten_str(&v)));
            for (k, v) in attrs.filter(|(_, v)| !v.is_empty()) {
                if let Ok(a) = MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(v)
                    .build()
                {
                    req = req.message_attributes(k, a);
                }
            }
            if let Err(e) = req.send().await {
                failures.push(format!(
                    "the message to SNS topic {} was not sent: {}",
                    flatten_str(arn),
                    readable(&e)
                ));
            }
        }
        if let Some((bus, events)) = &self.bus {
            match serde_json::to_string(n) {
                Err(e) => failures.push(format!("the event was not built: {e}")),
                Ok(detail) => {
                    let entry = PutEventsRequestEntry::builder()
                        .source(SOURCE)
                        .detail_type(n.kind.detail_type())
                        .detail(detail)
                        .event_bus_name(bus)
                        .build();
                    match events.put_events().entries(entry).send().await {
                        Err(e) => failures.push(format!(
                            "the event to EventBridge bus {} was not sent: {}",
                            flatten_str(bus),
                            readable(&e)
                        )),
                        Ok(out) if out.failed_entry_count() > 0 => {
                            let why = out
                                .entries()
                                .iter()
                                .filter_map(|e| e.error_code().map(|c| (c, e.error_message())))
                                .map(|(c, m)| format!("{c}: {}", m.unwrap_or_default()))
                                .collect::<Vec<_>>()
                                .join("; ");
                            failures.push(format!(
                                "the event to EventBridge bus {} was refused: {}",
                                flatten_str(bus),
                                flatten_str(&why)
                            ));
                        }
                        Ok(_) => {}
                    }
                }
            }
        }
        failures
    }
}

#[cfg(test)]
mod tests {
    use super::{arn_region, fifo_ids};

    #[test]
    fn a_target_arn_names_the_region_its_client_uses() {
        assert_eq!(
            arn_region("arn:aws:sns:eu-west-1:123456789012:cdkd-flow"),
            Some("eu-west-1")
        );
        assert_eq!(
            arn_region("arn:aws:events:us-east-2:123456789012:event-bus/ops"),
            Some("us-east-2")
        );
        assert_eq!(arn_region("default"), None);
        assert_eq!(arn_region("arn:aws:sns::1:x"), None);
    }

    /// A FIFO topic gets the run as the message group and a deduplication id of its own
    /// per tell; a standard topic neither.
    #[test]
    fn a_fifo_topic_gets_the_runs_group_and_a_deduplication_id_per_tell() {
        let n = cdkd_core::view::notify::cleanup_finished(
            "cleanup-20261203T000000",
            &serde_json::json!({"dryRun": true, "selected": [], "skipped": []}),
        );
        assert_eq!(
            fifo_ids("arn:aws:sns:us-east-1:123456789012:ops", &n, 7),
            None
        );
        let (group, dedup) =
            fifo_ids("arn:aws:sns:us-east-1:123456789012:ops.fifo", &n, 7).unwrap();
        assert_eq!(group, "cleanup-20261203T000000");
        assert_eq!(dedup, "cleanup-finished-cleanup-20261203T000000-7");
        assert!(dedup.len() <= 128);
    }
}
