//! The provider of an SNS-backed custom resource, played by a test (the emulator publishes
//! the request to the ServiceToken topic; see docs/emulator.md): a topic with a queue
//! subscribed to it, and an answer to the request that arrives there.

use serde_json::{json, Value};

use crate::sdk;

/// A topic (the ServiceToken) and the URL of a queue subscribed to it (the provider's
/// inbox), named after `tag`.
pub async fn sns_provider(tag: &str) -> (String, String) {
    let sdk = sdk().await;
    let sns = aws_sdk_sns::Client::new(&sdk);
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let topic = sns
        .create_topic()
        .name(format!("{tag}-provider"))
        .send()
        .await
        .expect("create the provider's topic")
        .topic_arn()
        .unwrap_or_default()
        .to_string();
    let queue = sqs
        .create_queue()
        .queue_name(format!("{tag}-requests"))
        .send()
        .await
        .expect("create the provider's queue")
        .queue_url()
        .unwrap_or_default()
        .to_string();
    let region = topic.split(':').nth(3).unwrap_or("us-east-1").to_string();
    let account = topic
        .split(':')
        .nth(4)
        .unwrap_or("123456789012")
        .to_string();
    let queue_arn = format!(
        "arn:aws:sqs:{region}:{account}:{}",
        queue.rsplit('/').next().unwrap_or_default()
    );
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(queue_arn)
        .send()
        .await
        .expect("subscribe the provider's queue");
    (topic, queue)
}

/// Waits for requests on `queue` and answers each SUCCESS with the physical id
/// `<LogicalResourceId>-new` at its ResponseURL (the emulator, 127.0.0.1), until
/// `count` requests were answered; returns them in order. Short polls, a pause between
/// them on this side: a long poll would hold the single-threaded emulator and stall the
/// run it answers.
pub async fn answer_requests(queue: String, count: usize) -> Vec<Value> {
    let sqs = aws_sdk_sqs::Client::new(&sdk().await);
    let mut seen = Vec::new();
    for _ in 0..900 {
        let got = sqs
            .receive_message()
            .queue_url(&queue)
            .wait_time_seconds(0)
            .send()
            .await
            .expect("receive from the provider's queue");
        let Some(m) = got.messages().first() else {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            continue;
        };
        if let Some(handle) = m.receipt_handle() {
            let _ = sqs
                .delete_message()
                .queue_url(&queue)
                .receipt_handle(handle)
                .send()
                .await;
        }
        let envelope: Value =
            serde_json::from_str(m.body().unwrap_or("{}")).expect("an SNS envelope");
        let event: Value =
            serde_json::from_str(envelope["Message"].as_str().unwrap_or("{}")).expect("a request");
        let logical = event["LogicalResourceId"].as_str().unwrap_or_default();
        let answer = json!({"Status": "SUCCESS", "PhysicalResourceId": format!("{logical}-new"),
            "StackId": event["StackId"], "RequestId": event["RequestId"],
            "LogicalResourceId": logical, "Data": {"Answer": "42"}});
        let url = event["ResponseURL"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        tokio::task::spawn_blocking(move || http_put(&url, &answer.to_string()))
            .await
            .expect("the answer was sent");
        seen.push(event);
        if seen.len() == count {
            return seen;
        }
    }
    panic!(
        "{} of {count} custom resource request(s) reached the provider",
        seen.len()
    );
}

/// A plain HTTP/1.1 PUT to the emulator (a ResponseURL on 127.0.0.1).
fn http_put(url: &str, body: &str) {
    use std::io::{Read, Write};
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .expect("a ResponseURL on 127.0.0.1");
    let (port, path) = rest.split_once('/').expect("a path");
    let port: u16 = port.parse().expect("a port");
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the emulator");
    let req = format!(
        "PUT /{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: \r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("send the answer");
    let mut resp = String::new();
    s.read_to_string(&mut resp)
        .expect("read the emulator's reply");
    assert!(resp.contains(" 200 "), "{resp}");
}
