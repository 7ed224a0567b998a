//! The custom-resource deleter against the emulator, end to end: the Delete request goes
//! to an SNS ServiceToken (delivered to an SQS queue that stands in for the handler),
//! the "handler" PUTs its answer to the presigned ResponseURL with a plain HTTP request,
//! and `poll` reads the answer from the state bucket and removes it.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test deleters_custom`.

use std::io::{Read, Write};
use std::time::Duration;

use cdkd_deleters::clients::{registry_from_config, s3_client};
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, DeleteRequest, Handle, Registry, RunContext};
use cdkd_tests::deleters::{cfg, unique, HOME};
use serde_json::{json, Value};

/// A PUT of `body` to `url` (http://127.0.0.1:port/...) the way a cfn-response handler
/// does it: only Host, Content-Type (empty) and Content-Length. Returns the status code.
fn http_put(url: &str, body: &str) -> u16 {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').expect("path"));
    assert!(
        host.starts_with("127.0.0.1:") || host.starts_with("localhost:"),
        "not local: {host}"
    );
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: \r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    resp.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

struct Fixture {
    reg: Registry,
    s3: aws_sdk_s3::Client,
    sqs: aws_sdk_sqs::Client,
    bucket: String,
    topic: String,
    queue_url: String,
}

async fn fixture() -> Fixture {
    let c = cfg(HOME).await;
    let s3 = s3_client(&c);
    let sns = aws_sdk_sns::Client::new(&c);
    let sqs = aws_sdk_sqs::Client::new(&c);
    let bucket = unique("cr-state");
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let topic = sns
        .create_topic()
        .name(unique("cr-token"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let queue_url = sqs
        .create_queue()
        .queue_name(unique("cr-handler"))
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let queue_arn = cdkd_tests::fixtures::queue_arn(&c, &queue_url).await;
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(queue_arn)
        .attributes("RawMessageDelivery", "true")
        .send()
        .await
        .unwrap();
    Fixture {
        reg: registry_from_config(&c, s3.clone()),
        s3,
        sqs,
        bucket,
        topic,
        queue_url,
    }
}

fn request(f: &Fixture) -> DeleteRequest {
    DeleteRequest {
        logical_id: "Cleanup".into(),
        resource_type: "Custom::Cleanup".into(),
        physical_id: "cleanup-1".into(),
        properties: json!({"ServiceToken": f.topic, "Force": true}),
        attributes: Value::Null,
        provisioned_by: None,
        region: "us-east-1".into(),
        attempt: 0,
        run: RunContext {
            run_id: unique("run"),
            stack: "CrStack".into(),
            state_bucket: f.bucket.clone(),
            state_prefix: "cdkd".into(),
        },
        options: Default::default(),
    }
}

/// The Delete request as the handler receives it.
async fn receive(f: &Fixture) -> Value {
    for _ in 0..20 {
        let out = f
            .sqs
            .receive_message()
            .queue_url(&f.queue_url)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        if let Some(m) = out.messages().first() {
            return serde_json::from_str(m.body().unwrap()).unwrap();
        }
    }
    panic!("the Delete request never reached the handler queue");
}

#[tokio::test]
async fn custom_resource_answer_put_to_the_presigned_url_completes_the_delete_and_is_removed() {
    let f = fixture().await;
    let r = request(&f);
    let DeleteProgress::InFlight { handle, .. } = f.reg.start(&r).await.unwrap() else {
        panic!("expected InFlight");
    };
    let Handle::CustomResource {
        request_id,
        response_key,
        ..
    } = handle.clone()
    else {
        panic!("wrong handle {handle:?}");
    };
    assert_eq!(
        response_key,
        format!("cdkd/_runs/{}/cr/Cleanup.json", r.run.run_id)
    );

    let msg = receive(&f).await;
    assert_eq!(msg["RequestType"], "Delete");
    assert_eq!(msg["RequestId"], request_id.as_str());
    assert_eq!(msg["ResourceProperties"]["Force"], "true");
    let url = msg["ResponseURL"].as_str().unwrap();
    assert!(
        url.contains("X-Amz-SignedHeaders=host&") || url.ends_with("X-Amz-SignedHeaders=host"),
        "the URL needs more than Host: {url}"
    );

    // Not answered yet: still in flight (the placeholder is empty).
    let still = f.reg.poll(&r, &handle).await.unwrap();
    assert!(
        matches!(still, DeleteProgress::InFlight { .. }),
        "{still:?}"
    );

    let answer = json!({
        "Status": "SUCCESS", "RequestId": request_id, "StackId": msg["StackId"],
        "LogicalResourceId": "Cleanup", "PhysicalResourceId": "cleanup-1", "Reason": "ok"
    });
    assert_eq!(http_put(url, &answer.to_string()), 200);

    assert_eq!(f.reg.poll(&r, &handle).await, Ok(DeleteProgress::Done));
    let gone =
        f.s3.head_object()
            .bucket(&f.bucket)
            .key(&response_key)
            .send()
            .await;
    assert!(gone.is_err(), "the response object was not removed");
}

#[tokio::test]
async fn custom_resource_failed_answer_at_the_presigned_url_skips_the_row() {
    let f = fixture().await;
    let r = request(&f);
    let DeleteProgress::InFlight { handle, .. } = f.reg.start(&r).await.unwrap() else {
        panic!("expected InFlight");
    };
    let msg = receive(&f).await;
    let answer =
        json!({"Status": "FAILED", "RequestId": msg["RequestId"], "Reason": "bucket still in use"});
    assert_eq!(
        http_put(msg["ResponseURL"].as_str().unwrap(), &answer.to_string()),
        200
    );
    let e = f.reg.poll(&r, &handle).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped, "{e}");
    assert!(e.message.contains("bucket still in use"), "{e}");
}
