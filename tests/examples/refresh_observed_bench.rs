//! What refreshing a large record costs, measured (not a timed test): seeds a record of
//! N resources (default 500) on the emulator, each a real resource (SQS queues, SNS
//! topics, SSM parameters, log groups), then refreshes it through the product's own
//! path (`cdkd_deleters::read::refresh::refresh_stack`: lock, read, SSM, redact, save
//! with If-Match, release) with the reads of the record concurrent (the CLI's bound)
//! and one by one, and prints both times.
//!
//! The emulator (moto) serves one request at a time, so the gain measured here is the
//! client's overlap of request latency with the server's work; against AWS, where
//! requests run in parallel, the concurrent figure improves more.
//!
//! Run: `make bench-refresh` (or `scripts/with-emulator.sh
//! target/debug/examples/refresh_observed_bench [--resources 500] [--runs 3]` after
//! `cargo build --workspace --all-targets`).

use std::time::{Duration, Instant};

use cdkd_aws::ssm::Ssm;
use cdkd_deleters::clients::readers_from_config;
use cdkd_deleters::read::refresh::{refresh_stack, RefreshOptions};
use cdkd_deleters::read::registry::READ_CONCURRENCY;
use cdkd_tests as h;
use futures::stream::{self, StreamExt};
use serde_json::{json, Map, Value};

const REGION: &str = "us-east-1";

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Creates resource `i` on the emulator; returns its record entry.
async fn seed(c: &aws_config::SdkConfig, tag: &str, i: usize) -> Value {
    match i % 4 {
        0 => {
            let url = aws_sdk_sqs::Client::new(c)
                .create_queue()
                .queue_name(format!("{tag}-q{i}"))
                .send()
                .await
                .expect("create queue")
                .queue_url
                .expect("url");
            json!({"resourceType": "AWS::SQS::Queue", "physicalId": url, "properties": {}})
        }
        1 => {
            let arn = aws_sdk_sns::Client::new(c)
                .create_topic()
                .name(format!("{tag}-t{i}"))
                .send()
                .await
                .expect("create topic")
                .topic_arn
                .expect("arn");
            json!({"resourceType": "AWS::SNS::Topic", "physicalId": arn, "properties": {}})
        }
        2 => {
            let name = format!("/{tag}/p{i}");
            aws_sdk_ssm::Client::new(c)
                .put_parameter()
                .name(&name)
                .value("v")
                .r#type(aws_sdk_ssm::types::ParameterType::String)
                .send()
                .await
                .expect("put parameter");
            json!({"resourceType": "AWS::SSM::Parameter", "physicalId": name,
                   "properties": {"Value": "v", "Type": "String"}})
        }
        _ => {
            let name = format!("/{tag}/lg{i}");
            aws_sdk_cloudwatchlogs::Client::new(c)
                .create_log_group()
                .log_group_name(&name)
                .send()
                .await
                .expect("create log group");
            json!({"resourceType": "AWS::Logs::LogGroup", "physicalId": name, "properties": {}})
        }
    }
}

#[tokio::main]
async fn main() {
    let n = arg("--resources", 500);
    let runs = arg("--runs", 3).max(1);
    let c = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let tag = h::unique_bucket_name("rb");
    let t0 = Instant::now();
    let entries: Vec<Value> = stream::iter(0..n)
        .map(|i| {
            let (c, tag) = (&c, &tag);
            async move { seed(c, tag, i).await }
        })
        .buffered(8)
        .collect()
        .await;
    let mut resources = Map::new();
    for (i, e) in entries.into_iter().enumerate() {
        resources.insert(format!("R{i:04}"), e);
    }
    let record = json!({"version": 10, "stackName": "Big", "region": REGION,
                        "resources": resources, "outputs": {}});
    h::put_raw(
        &s3,
        &bucket,
        "cdkd/Big/us-east-1/state.json",
        record.to_string(),
    )
    .await;
    println!(
        "seeded {n} resources (queues, topics, parameters, log groups) in {:.1}s",
        t0.elapsed().as_secs_f64()
    );

    let store = h::store(&s3, &bucket);
    let locks = h::locks(&s3, &bucket);
    let readers = readers_from_config(&c);
    let ssm = Ssm::new(&c, Some(REGION), None);
    let modes = [("concurrent", READ_CONCURRENCY), ("one by one", 1)];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); modes.len()];
    // The modes take turns, so a server that slows down as it fills hurts both alike.
    for _ in 0..runs {
        for (m, (_, concurrency)) in modes.iter().enumerate() {
            let t = Instant::now();
            let ran = refresh_stack(
                &store,
                &locks,
                &readers,
                &ssm,
                "Big",
                REGION,
                RefreshOptions {
                    owner: "bench@local:1",
                    concurrency: *concurrency,
                    now_ms: h::now_ms(),
                },
            )
            .await;
            let elapsed = t.elapsed();
            let tally = ran.outcome.expect("refreshed").tally;
            assert_eq!(tally.refreshed as usize, n, "every resource refreshed");
            times[m].push(elapsed);
        }
    }
    let mut report = Vec::new();
    for ((label, concurrency), mut t) in modes.into_iter().zip(times) {
        t.sort();
        let median = t[t.len() / 2];
        println!(
            "{label:>10} (at most {concurrency} reads in flight): median {:.2}s over {runs} run(s) [{}]",
            median.as_secs_f64(),
            t.iter()
                .map(|d| format!("{:.2}s", d.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        report.push(median);
    }
    println!(
        "speed-up: {:.1}x",
        report[1].as_secs_f64() / report[0].as_secs_f64().max(1e-9)
    );
}
