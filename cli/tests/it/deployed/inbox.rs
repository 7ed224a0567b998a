//! What people receive from the deployed backend: an SQS queue subscribed to the
//! backend's topic (output `NotifyTopicArn`) and an EventBridge rule on the default bus
//! (the template's `NotifyEventBus`) sending every `cdkd-flow` event to a second queue.
//! Made once per test binary; every test looks for its own run's messages.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use cdkd_tests as h;
use serde_json::{json, Value};

struct Queues {
    topic_queue: String,
    bus_queue: String,
}

static QUEUES: OnceLock<Queues> = OnceLock::new();
/// Messages drained so far: (from the topic, from the bus).
static SEEN: Mutex<(Vec<Value>, Vec<Value>)> = Mutex::new((Vec::new(), Vec::new()));

async fn queues() -> &'static Queues {
    if let Some(q) = QUEUES.get() {
        return q;
    }
    let sdk = h::sdk().await;
    let topic = super::backend()
        .outputs()
        .await
        .remove("NotifyTopicArn")
        .expect("the backend stack's NotifyTopicArn output");
    let topic_queue = h::fixtures::queue(&sdk, &super::uniq("deployed-sns")).await;
    aws_sdk_sns::Client::new(&sdk)
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(h::fixtures::queue_arn(&sdk, &topic_queue).await)
        .send()
        .await
        .unwrap();
    let bus_queue = h::fixtures::queue(&sdk, &super::uniq("deployed-events")).await;
    let events = aws_sdk_eventbridge::Client::new(&sdk);
    let rule = super::uniq("deployed-rule");
    events
        .put_rule()
        .name(&rule)
        .event_pattern(json!({"source": ["cdkd-flow"]}).to_string())
        .send()
        .await
        .unwrap();
    events
        .put_targets()
        .rule(&rule)
        .targets(
            aws_sdk_eventbridge::types::Target::builder()
                .id("queue")
                .arn(h::fixtures::queue_arn(&sdk, &bus_queue).await)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let _ = QUEUES.set(Queues {
        topic_queue,
        bus_queue,
    });
    QUEUES.get().expect("set above")
}

/// Subscribes the inbox before a run whose messages a test checks.
pub async fn open() {
    queues().await;
}

async fn drain(url: &str) -> Vec<Value> {
    let sqs = aws_sdk_sqs::Client::new(&h::sdk().await);
    let mut out = Vec::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .send()
            .await
            .unwrap();
        let msgs = got.messages.unwrap_or_default();
        if msgs.is_empty() {
            return out;
        }
        for m in msgs {
            let body = m.body.unwrap_or_default();
            out.push(serde_json::from_str(&body).unwrap_or(Value::String(body)));
            sqs.delete_message()
                .queue_url(url)
                .receipt_handle(m.receipt_handle.unwrap_or_default())
                .send()
                .await
                .unwrap();
        }
    }
}

/// Waits (at most 60 s) until `kind` of run `run_id` has arrived on the topic (as a
/// message with attributes `kind` and `runId`) and on the bus (as an event whose
/// detail names them); returns (message text, event detail).
pub async fn expect(kind: &str, run_id: &str) -> (String, Value) {
    let q = queues().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (from_topic, from_bus) = (drain(&q.topic_queue).await, drain(&q.bus_queue).await);
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        seen.0.extend(from_topic);
        seen.1.extend(from_bus);
        let message = seen.0.iter().find(|m| {
            m["MessageAttributes"]["kind"]["Value"] == kind
                && m["MessageAttributes"]["runId"]["Value"] == run_id
        });
        let event = seen
            .1
            .iter()
            .find(|e| e["detail"]["kind"] == kind && e["detail"]["runId"] == run_id);
        if let (Some(m), Some(e)) = (message, event) {
            return (
                m["Message"].as_str().unwrap_or_default().to_string(),
                e["detail"].clone(),
            );
        }
        assert!(
            Instant::now() < deadline,
            "no {kind} of run {run_id} on both the topic and the bus within 60 s: topic {:#?}, bus {:#?}",
            seen.0,
            seen.1
        );
        drop(seen);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}
