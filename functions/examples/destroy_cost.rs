//! What a destroy costs, measured: runs `statemachines/destroy.asl.json` through the
//! local engine on the emulator for stacks of N real resources (SNS topics, SQS queues
//! depending on them, SSM parameters depending on the queues), counts the state
//! transitions (every state entered, plus every retry) and times every Lambda step, then
//! prices them:
//!
//! - Step Functions Standard: transitions x $0.000025 (us-east-1 public price, $0.025 per
//!   1,000 transitions);
//! - Lambda: sum over invocations of (duration rounded up to 1 ms x memory in GB, memory
//!   from `infra/template.yaml`) x $0.0000166667 per GB-second (x86_64), plus requests x
//!   $0.20 per million.
//!
//! The step durations are measured in-process against the local emulator (moto, one
//! thread): AWS API latency differs, so treat the GB-seconds as an order of magnitude.
//! Init (cold start) time is not included; `make lambda-init` measures it.
//!
//! A cleanup run over several stacks is measured too (`--cleanup 5x10`: five stacks of ten
//! resources; its transitions include the Map and every child destroy execution).
//!
//! Run: `make cost` (or `scripts/with-emulator.sh target/debug/examples/destroy_cost
//! --sizes 10,50,200 --cleanup 5x10` after `cargo build --workspace --all-targets`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_config::SdkConfig;
use cdkd_engine::{
    Engine, EngineOptions, Event, EventKind, Observer, Outcome, StateMachine, TaskError,
    TaskHandler,
};
use cdkd_functions::{definitions, steps, Deps};
use futures::stream::{self, StreamExt};
use serde_json::{json, Map, Value};

const TEMPLATE: &str = include_str!("../../infra/template.yaml");
/// Step Functions Standard, per state transition (us-east-1).
const PRICE_TRANSITION: f64 = 0.000025;
/// Lambda x86_64, per GB-second (us-east-1, first tier).
const PRICE_GB_S: f64 = 0.0000166667;
/// Lambda, per request.
const PRICE_REQUEST: f64 = 0.20 / 1_000_000.0;

/// Lambda memory (MB) of each step: its function's `MemorySize` in the template, else
/// the `Globals` one. A function is the top-level resource whose `Handler` is its step
/// (every function runs the one `cdkd-step` binary of the `Globals` `CodeUri`).
fn memory_mb(template: &str) -> BTreeMap<String, u64> {
    let mut global = 128;
    let mut section = "";
    // Per resource (a line indented by 2 under Resources): its step and MemorySize.
    let mut blocks: Vec<(Option<String>, Option<u64>)> = Vec::new();
    for line in template.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if indent == 0 {
            section = if t.starts_with("Globals:") {
                "Globals"
            } else if t.starts_with("Resources:") {
                "Resources"
            } else {
                ""
            };
            continue;
        }
        if section == "Resources" && indent == 2 {
            blocks.push((None, None));
            continue;
        }
        let value = |key: &str| t.strip_prefix(key).map(|v| v.trim().to_string());
        if let Some(v) = value("MemorySize:") {
            let mb = v.parse().ok();
            match (section, blocks.last_mut()) {
                ("Globals", _) => global = mb.unwrap_or(global),
                ("Resources", Some(b)) => b.1 = mb,
                _ => {}
            }
        } else if let Some(v) = value("Handler:") {
            if let (true, Some(b)) = (section == "Resources", blocks.last_mut()) {
                b.0 = Some(v.trim_matches(['"', '\'']).to_string());
            }
        }
    }
    blocks
        .into_iter()
        .filter_map(|(step, mb)| step.map(|s| (s, mb.unwrap_or(global))))
        .collect()
}

/// Runs the steps in-process and times every invocation.
struct Timed {
    deps: Deps,
    calls: Mutex<Vec<(String, Duration)>>,
}

#[async_trait]
impl TaskHandler for Timed {
    async fn invoke(&self, function: &str, payload: Value) -> Result<Value, TaskError> {
        let start = Instant::now();
        let out = steps::invoke(function, payload, &self.deps).await;
        let took = start.elapsed();
        if let Ok(mut c) = self.calls.lock() {
            c.push((function.to_string(), took));
        }
        out.map_err(|e| TaskError::new(e.name, e.message))
    }
}

fn uniq(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Resource `i` of a stack: topics, queues depending on the topic before them,
/// parameters depending on the queue before them (three dependency levels).
async fn create(sdk: &SdkConfig, i: usize) -> Result<(String, Value), Error> {
    let id = format!("R{i:04}");
    let (ty, physical, deps) = match i % 3 {
        0 => {
            let arn = aws_sdk_sns::Client::new(sdk)
                .create_topic()
                .name(uniq("cost-t"))
                .send()
                .await?
                .topic_arn
                .ok_or("CreateTopic returned no ARN")?;
            ("AWS::SNS::Topic", arn, vec![])
        }
        1 => {
            let url = aws_sdk_sqs::Client::new(sdk)
                .create_queue()
                .queue_name(uniq("cost-q"))
                .send()
                .await?
                .queue_url
                .ok_or("CreateQueue returned no URL")?;
            ("AWS::SQS::Queue", url, vec![format!("R{:04}", i - 1)])
        }
        _ => {
            let name = format!("/cost/{}", uniq("p"));
            aws_sdk_ssm::Client::new(sdk)
                .put_parameter()
                .name(&name)
                .value("v")
                .r#type(aws_sdk_ssm::types::ParameterType::String)
                .send()
                .await?;
            ("AWS::SSM::Parameter", name, vec![format!("R{:04}", i - 1)])
        }
    };
    Ok((
        id,
        json!({"physicalId": physical, "resourceType": ty, "properties": {},
               "dependencies": deps, "provisionedBy": "sdk"}),
    ))
}

/// One measured run (a destroy, or a cleanup over several stacks).
struct Measured {
    label: String,
    transitions: u64,
    retries: u64,
    wall: Duration,
    calls: Vec<(String, Duration)>,
}

/// Creates `n` real resources and their cdkd record `cdkd/<stack>/us-east-1/state.json`.
async fn seed_stack(
    sdk: &SdkConfig,
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    stack: &str,
    n: usize,
) -> Result<(), Error> {
    let created: Vec<Result<(String, Value), Error>> = stream::iter(0..n)
        .map(|i| create(sdk, i))
        .buffered(8)
        .collect()
        .await;
    let mut resources = Map::new();
    for r in created {
        let (id, v) = r?;
        resources.insert(id, v);
    }
    let record = json!({"version": 10, "stackName": stack, "region": "us-east-1",
                        "resources": resources, "outputs": {}, "lastModified": 1});
    s3.put_object()
        .bucket(bucket)
        .key(format!("cdkd/{stack}/us-east-1/state.json"))
        .body(serde_json::to_vec(&record)?.into())
        .send()
        .await?;
    Ok(())
}

async fn fresh_bucket(s3: &aws_sdk_s3::Client) -> Result<String, Error> {
    let bucket = format!("cost-{}", &uuid::Uuid::new_v4().simple().to_string()[..20]);
    s3.create_bucket().bucket(&bucket).send().await?;
    Ok(bucket)
}

/// An engine running the steps in-process, counting transitions (states entered, every
/// execution, children included, plus retries) and timing every step.
struct Counted {
    engine: Engine,
    handler: Arc<Timed>,
    entered: Arc<AtomicU64>,
    retries: Arc<AtomicU64>,
}

impl Counted {
    async fn new(sdk: &SdkConfig) -> Counted {
        let handler = Arc::new(Timed {
            // The deployed budgets (what the Lambda steps use).
            deps: Deps::from_sdk(sdk.clone(), None).await,
            calls: Mutex::new(Vec::new()),
        });
        let entered = Arc::new(AtomicU64::new(0));
        let retries = Arc::new(AtomicU64::new(0));
        let (e, r) = (entered.clone(), retries.clone());
        let observer: Observer = Arc::new(move |ev: &Event| match ev.kind {
            EventKind::StateEntered(_) => {
                e.fetch_add(1, Ordering::Relaxed);
            }
            EventKind::StateRetryScheduled => {
                r.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        });
        let engine = Engine::new(
            handler.clone(),
            EngineOptions {
                // Wait states are free in Standard workflows (only transitions are billed).
                time_scale: 0.0,
                ..EngineOptions::default()
            },
        )
        .with_observer(observer);
        Counted {
            engine,
            handler,
            entered,
            retries,
        }
    }

    fn measured(&self, label: String, wall: Duration) -> Result<Measured, Error> {
        let calls = self
            .handler
            .calls
            .lock()
            .map(|c| c.clone())
            .map_err(|_| "poisoned")?;
        let retries = self.retries.load(Ordering::Relaxed);
        Ok(Measured {
            label,
            transitions: self.entered.load(Ordering::Relaxed) + retries,
            retries,
            wall,
            calls,
        })
    }
}

/// One destroy of a stack of `n` resources.
async fn measure_destroy(sdk: &SdkConfig, n: usize) -> Result<Measured, Error> {
    let s3 = cdkd_aws::config::s3_client(sdk);
    let bucket = fresh_bucket(&s3).await?;
    let stack = uniq("Cost");
    seed_stack(sdk, &s3, &bucket, &stack, n).await?;
    let c = Counted::new(sdk).await;
    let sm = StateMachine::load(definitions::DESTROY, &definitions::local_substitutions())?;
    let start = Instant::now();
    let out = c
        .engine
        .run_named(
            &sm,
            json!({"stack": stack, "stateBucket": bucket}),
            &uniq("run"),
        )
        .await;
    let wall = start.elapsed();
    match out {
        Outcome::Succeeded(v) if v["complete"] == json!(true) => {}
        other => {
            return Err(format!("destroy of {n} resources did not complete: {other:?}").into())
        }
    }
    c.measured(format!("destroy, {n} resources"), wall)
}

/// One cleanup run destroying `stacks` stacks of `n` resources each (the destroy
/// workflow started per stack through `states:startExecution.sync:2`).
async fn measure_cleanup(sdk: &SdkConfig, stacks: usize, n: usize) -> Result<Measured, Error> {
    let s3 = cdkd_aws::config::s3_client(sdk);
    let bucket = fresh_bucket(&s3).await?;
    for i in 0..stacks {
        seed_stack(sdk, &s3, &bucket, &format!("pr-{i}"), n).await?;
    }
    let c = Counted::new(sdk).await;
    let mut subs = definitions::local_substitutions();
    let destroy = StateMachine::load(definitions::DESTROY, &subs)?;
    let arn = c.engine.state_machine_arn("destroy");
    c.engine.register(arn.clone(), destroy);
    subs.insert("DestroyStateMachineArn".into(), arn);
    let cleanup = StateMachine::load(definitions::CLEANUP, &subs)?;
    let start = Instant::now();
    let out = c
        .engine
        .run(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d"}),
        )
        .await;
    let wall = start.elapsed();
    match out {
        Outcome::Succeeded(v) if v["succeededCount"] == json!(stacks) => {}
        other => {
            return Err(format!("cleanup of {stacks} stacks did not succeed: {other:?}").into())
        }
    }
    c.measured(format!("cleanup, {stacks} stacks x {n}"), wall)
}

/// The run whose summed step time is the median of `runs` (transitions do not vary).
fn median_run(mut runs: Vec<Measured>) -> Result<Measured, Error> {
    runs.sort_by_key(|m| m.calls.iter().map(|(_, d)| *d).sum::<Duration>());
    let mid = runs.len() / 2;
    runs.into_iter().nth(mid).ok_or_else(|| "no run".into())
}

fn gb_seconds(calls: &[(String, Duration)], memory: &BTreeMap<String, u64>) -> f64 {
    calls
        .iter()
        .map(|(step, d)| {
            let ms = d.as_nanos().div_ceil(1_000_000) as f64;
            let mb = memory.get(step).copied().unwrap_or(128) as f64;
            ms / 1000.0 * mb / 1024.0
        })
        .sum()
}

/// The cost table (markdown) and the per-step detail.
fn render(rows: &[Measured], memory: &BTreeMap<String, u64>) -> String {
    let mut s = String::from(
        "| run | state transitions | Lambda requests | Lambda ms (sum) | GB-s | Step Functions $ | Lambda $ | total $ | wall s (local) |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in rows {
        let gbs = gb_seconds(&m.calls, memory);
        let ms: u128 = m
            .calls
            .iter()
            .map(|(_, d)| d.as_nanos().div_ceil(1_000_000))
            .sum();
        let sf = m.transitions as f64 * PRICE_TRANSITION;
        let lambda = gbs * PRICE_GB_S + m.calls.len() as f64 * PRICE_REQUEST;
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.3} | {:.6} | {:.7} | {:.6} | {:.1} |\n",
            m.label,
            m.transitions,
            m.calls.len(),
            ms,
            gbs,
            sf,
            lambda,
            sf + lambda,
            m.wall.as_secs_f64()
        ));
    }
    s.push_str("\nper step (invocations x MB: ms each)\n");
    for m in rows {
        let mut by_step: BTreeMap<&str, Vec<u128>> = BTreeMap::new();
        for (step, d) in &m.calls {
            by_step
                .entry(step)
                .or_default()
                .push(d.as_nanos().div_ceil(1_000_000));
        }
        let parts: Vec<String> = by_step
            .iter()
            .map(|(step, ms)| {
                let mb = memory.get(*step).copied().unwrap_or(128);
                let list: Vec<String> = ms.iter().map(|x| x.to_string()).collect();
                format!("{step} {}x{mb}MB: {} ms", ms.len(), list.join("+"))
            })
            .collect();
        s.push_str(&format!(
            "{}: {} (retries {})\n",
            m.label,
            parts.join("; "),
            m.retries
        ));
    }
    s
}

/// `--sizes 10,50,200` (destroys) and `--cleanup STACKSxN` (one cleanup run; `0` skips).
struct Args {
    sizes: Vec<usize>,
    cleanup: Option<(usize, usize)>,
    /// Runs per row; the row shown is the run with the median Lambda time.
    repeat: usize,
}

const USAGE: &str =
    "usage: destroy_cost [--sizes 10,50,200] [--cleanup 5x10 | --cleanup 0] [--repeat 3]";

fn parse_args() -> Result<Args, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out = Args {
        sizes: vec![10, 50, 200],
        cleanup: Some((5, 10)),
        repeat: 3,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                let v = it.next().ok_or(USAGE)?;
                out.sizes = v
                    .split(',')
                    .map(|x| x.trim().parse::<usize>())
                    .collect::<Result<_, _>>()?;
            }
            "--cleanup" => {
                let v = it.next().ok_or(USAGE)?;
                out.cleanup = match v.split_once('x') {
                    _ if v == "0" => None,
                    Some((k, n)) => Some((k.trim().parse()?, n.trim().parse()?)),
                    None => return Err(USAGE.into()),
                };
            }
            "--repeat" => {
                out.repeat = it.next().ok_or(USAGE)?.parse::<usize>()?.max(1);
            }
            other => return Err(format!("unknown argument {other}; {USAGE}").into()),
        }
    }
    Ok(out)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args = parse_args()?;
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap_or_default();
    if !endpoint.starts_with("http://127.0.0.1:") {
        return Err("AWS_ENDPOINT_URL must name the local emulator (http://127.0.0.1:PORT): run under scripts/with-emulator.sh".into());
    }
    let sdk = cdkd_aws::config::load_sdk_config(None, Some("us-east-1")).await;
    let memory = memory_mb(TEMPLATE);
    let mut rows = Vec::new();
    for n in args.sizes {
        eprintln!("destroy of {n} resources, {} runs...", args.repeat);
        let mut runs = Vec::new();
        for _ in 0..args.repeat {
            runs.push(measure_destroy(&sdk, n).await?);
        }
        rows.push(median_run(runs)?);
    }
    if let Some((stacks, n)) = args.cleanup {
        eprintln!(
            "cleanup of {stacks} stacks of {n} resources, {} runs...",
            args.repeat
        );
        let mut runs = Vec::new();
        for _ in 0..args.repeat {
            runs.push(measure_cleanup(&sdk, stacks, n).await?);
        }
        rows.push(median_run(runs)?);
    }
    println!("{}", render(&rows, &memory));
    println!(
        "Each row: the run with the median Lambda time of {} runs.",
        args.repeat
    );
    println!(
        "Prices: Step Functions Standard ${PRICE_TRANSITION}/transition, Lambda x86_64 \
         ${PRICE_GB_S}/GB-s and $0.20/1M requests (us-east-1 public pricing). Step durations \
         measured in-process (debug build) against the local emulator: AWS API latency differs."
    );
    println!(
        "Memory from infra/template.yaml: {}",
        memory
            .iter()
            .map(|(s, m)| format!("{s}={m}MB"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
