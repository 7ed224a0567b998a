//! One stack's refresh under its lock (`cdkd_deleters::read::refresh`,
//! docs/repairs.md, "Order of checks" step 5, "Per resource", "Public SSM parameters inside a longer value") on the emulator: public SSM references inside a longer value
//! (String, StringList, SecureString, a missing parameter, a failed call; one call per
//! reference, never decrypted), a concurrent writer making the conditional save fail
//! with nothing lost, and a lock held by another process refusing before anything is
//! read or written.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 refresh_stack`.

use async_trait::async_trait;
use aws_sdk_ssm::types::ParameterType;
use cdkd_aws::calls::CallCounter;
use cdkd_aws::ssm::Ssm;
use cdkd_aws::StateStore;
use cdkd_core::repair::refresh::Tally;
use cdkd_deleters::clients::readers_from_config;
use cdkd_deleters::read::refresh::{refresh_stack, RefreshError, RefreshOptions, StackRun};
use cdkd_deleters::{ReadError, ReadRequest, Reader, Readers, SdkReader};
use cdkd_tests as h;
use cdkd_tests::deleters::{cfg, unique, HOME};
use serde_json::{json, Value};

const KEY: &str = "cdkd/App/us-east-1/state.json";

fn record(resources: Value) -> Value {
    json!({"version": 10, "stackName": "App", "region": HOME, "resources": resources,
           "outputs": {}, "skippedOutputs": ["Gone"], "lastModified": 1})
}

async fn put(bucket: &str, v: &Value) -> String {
    h::put_raw(&h::s3().await, bucket, KEY, v.to_string()).await
}

async fn stored(bucket: &str) -> (Value, String) {
    let (bytes, etag) = h::get_raw(&h::s3().await, bucket, KEY)
        .await
        .expect("record");
    (serde_json::from_slice(&bytes).expect("JSON"), etag)
}

async fn run(bucket: &str, readers: &Readers, ssm: &Ssm) -> StackRun {
    let s3 = h::s3().await;
    refresh_stack(
        &h::store(&s3, bucket),
        &h::locks(&s3, bucket),
        readers,
        ssm,
        "App",
        HOME,
        RefreshOptions {
            owner: "tester@host:1",
            concurrency: 4,
            now_ms: 1_767_225_600_000,
        },
    )
    .await
}

async fn lock_exists(bucket: &str) -> bool {
    h::get_raw(&h::s3().await, bucket, "cdkd/App/us-east-1/lock.json")
        .await
        .is_some()
}

// ---------------------------------------------------------------------------------
// docs/repairs.md, "Public SSM parameters inside a longer value": public SSM parameters inside a longer value

/// A stack whose SSM parameter resource `P` holds `https://{{resolve:ssm:<ref>}}/health`
/// in its record and `https://api.example.com/health` in AWS; `<ref>` is created with
/// `ref_type` (not at all when `None`). Returns P's stored baseline `Value` and the
/// number of GetParameter calls the SSM client made.
async fn ssm_case(ref_type: Option<ParameterType>, failing_ssm: bool) -> (Value, u64, StackRun) {
    let c = cfg(HOME).await;
    let ssm_api = aws_sdk_ssm::Client::new(&c);
    let host = format!("/app/{}", unique("host"));
    if let Some(t) = ref_type {
        ssm_api
            .put_parameter()
            .name(&host)
            .value("api.example.com")
            .r#type(t)
            .send()
            .await
            .unwrap();
    }
    let resource = format!("/app/{}", unique("url"));
    ssm_api
        .put_parameter()
        .name(&resource)
        .value("https://api.example.com/health")
        .r#type(ParameterType::String)
        .send()
        .await
        .unwrap();
    let text = format!("https://{{{{resolve:ssm:{host}}}}}/health");
    let bucket = h::fresh_bucket(&h::s3().await).await;
    put(
        &bucket,
        &record(json!({
            "P": {"resourceType": "AWS::SSM::Parameter", "physicalId": resource,
                  "properties": {"Name": resource, "Type": "String", "Value": text}},
            "Q": {"resourceType": "AWS::SSM::Parameter", "physicalId": resource,
                  "properties": {"Name": resource, "Type": "String", "Value": text}}
        })),
    )
    .await;
    let counter = CallCounter::new();
    // With `failing_ssm` nothing listens where SSM is asked: every GetParameter fails.
    let ssm = if failing_ssm {
        Ssm {
            client: aws_sdk_ssm::Client::from_conf(
                aws_sdk_ssm::config::Builder::from(&c)
                    .endpoint_url("http://127.0.0.1:1")
                    .build(),
            ),
        }
    } else {
        Ssm::new(&c, Some(HOME), Some(&counter))
    };
    let ran = run(&bucket, &readers_from_config(&c), &ssm).await;
    let (saved, _) = stored(&bucket).await;
    (
        saved["resources"]["P"]["observedProperties"]["Value"].clone(),
        counter.get("GetParameter"),
        ran,
    )
}

fn refreshed(ran: &StackRun) -> Tally {
    ran.outcome.as_ref().expect("refreshed").tally
}

#[tokio::test]
async fn refresh_stack_rule_6_5_statement_55_string_parameter_stores_the_reading_one_call() {
    let (value, calls, ran) = ssm_case(Some(ParameterType::String), false).await;
    assert_eq!(value, json!("https://api.example.com/health"));
    // Two resources embed the same reference: one call.
    assert_eq!(calls, 1);
    assert_eq!(refreshed(&ran).refreshed, 2);
}

#[tokio::test]
async fn refresh_stack_rule_6_5_string_list_parameter_stores_the_reading() {
    let (value, _, _) = ssm_case(Some(ParameterType::StringList), false).await;
    assert_eq!(value, json!("https://api.example.com/health"));
}

#[tokio::test]
async fn refresh_stack_rule_6_5_statement_55_secure_string_keeps_the_reference_text() {
    let (value, calls, ran) = ssm_case(Some(ParameterType::SecureString), false).await;
    assert!(
        value.as_str().unwrap().contains("{{resolve:ssm:/app/"),
        "{value}"
    );
    assert_eq!(calls, 1);
    assert_eq!(refreshed(&ran).failed, 0);
}

#[tokio::test]
async fn refresh_stack_rule_6_5_missing_parameter_keeps_the_reference_text() {
    let (value, calls, ran) = ssm_case(None, false).await;
    assert!(
        value.as_str().unwrap().contains("{{resolve:ssm:/app/"),
        "{value}"
    );
    assert_eq!(calls, 1);
    assert_eq!(refreshed(&ran).refreshed, 2);
}

#[tokio::test]
async fn refresh_stack_rule_6_5_statement_55_failed_call_keeps_the_reference_and_succeeds() {
    let (value, _, ran) = ssm_case(Some(ParameterType::String), true).await;
    assert!(
        value.as_str().unwrap().contains("{{resolve:ssm:/app/"),
        "{value}"
    );
    let t = refreshed(&ran);
    assert_eq!((t.refreshed, t.failed), (2, 0));
}

// ---------------------------------------------------------------------------------
// docs/repairs.md, "Order of checks" step 5 / "Per resource": the save, the lock

/// A reader for a made-up type that, while the refresh reads, saves the record as a
/// concurrent writer that ignores the lock would.
struct ConcurrentWriter {
    store: StateStore,
    body: Value,
}

#[async_trait]
impl Reader for ConcurrentWriter {
    async fn read(&self, _req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let key = "cdkd/App/us-east-1/state.json";
        self.store
            .put_raw(key, self.body.to_string().into_bytes())
            .await
            .map_err(|e| ReadError::Failed(e.to_string()))?;
        Ok(Some(json!({"Read": "by the refresh"})))
    }
}

impl SdkReader for ConcurrentWriter {
    const READS: &'static [&'static str] = &["Test::Concurrent::Writer"];
}

#[tokio::test]
async fn refresh_stack_rule_6_2_stale_etag_fails_the_save_and_the_other_writer_keeps_its_record() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    put(
        &bucket,
        &record(json!({"W": {"resourceType": "Test::Concurrent::Writer", "physicalId": "w"}})),
    )
    .await;
    let theirs = record(json!({"W": {"resourceType": "Test::Concurrent::Writer",
        "physicalId": "w", "observedProperties": {"Written": "by the other writer"}}}));
    let readers = Readers::empty().with_sdk(ConcurrentWriter {
        store: h::store(&s3, &bucket),
        body: theirs.clone(),
    });
    let ssm = Ssm::new(&cfg(HOME).await, Some(HOME), None);
    let ran = run(&bucket, &readers, &ssm).await;
    let Err(RefreshError::Stale(msg)) = &ran.outcome else {
        panic!("expected a stale save, got {:?}", ran.outcome);
    };
    assert!(msg.contains("modified by another process"), "{msg}");
    assert!(msg.contains("nothing was written"), "{msg}");
    // Nothing lost: the other writer's record is the one stored, the lock is released.
    assert_eq!(stored(&bucket).await.0, theirs);
    assert!(!lock_exists(&bucket).await);
    assert!(ran.release_warning.is_none());
}

#[tokio::test]
async fn refresh_stack_rule_6_1_statement_51_lock_held_by_another_process_refuses_before_any_read()
{
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let etag = put(
        &bucket,
        &record(json!({"W": {"resourceType": "Test::Concurrent::Writer", "physicalId": "w"}})),
    )
    .await;
    let lock = h::cdkd_lock_body(
        "bob@ci:7",
        h::now_ms(),
        h::now_ms() + 600_000,
        Some("deploy"),
    );
    h::put_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json", lock.clone()).await;
    // The reader would write the record if it were ever called.
    let readers = Readers::empty().with_sdk(ConcurrentWriter {
        store: h::store(&s3, &bucket),
        body: json!({"must": "not be written"}),
    });
    let ssm = Ssm::new(&cfg(HOME).await, Some(HOME), None);
    let ran = run(&bucket, &readers, &ssm).await;
    let Err(RefreshError::Locked(msg)) = &ran.outcome else {
        panic!("expected the contention refusal, got {:?}", ran.outcome);
    };
    assert!(msg.contains("bob@ci:7"), "{msg}");
    assert_eq!(stored(&bucket).await.1, etag, "the record was written");
    let (held, _) = h::get_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json")
        .await
        .expect("the other process's lock");
    assert_eq!(String::from_utf8(held).unwrap(), lock);
}

#[tokio::test]
async fn refresh_stack_rule_6_2_statements_53_54_redacted_baseline_saved_under_the_lock() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let c = cfg(HOME).await;
    let name = unique("rfn");
    cdkd_tests::fixtures::stub_function(&c, &name, aws_sdk_lambda::types::Runtime::Nodejs20x, None)
        .await;
    aws_sdk_lambda::Client::new(&c)
        .update_function_configuration()
        .function_name(&name)
        .environment(
            aws_sdk_lambda::types::Environment::builder()
                .variables("Password", "hunter2")
                .variables("Mode", "live")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let sm = "{{resolve:secretsmanager:db:SecretString:pw}}";
    put(
        &bucket,
        &record(json!({
            "F": {"resourceType": "AWS::Lambda::Function", "physicalId": name,
                  "properties": {"Environment": {"Variables": {"Password": sm, "Mode": "test"}}}},
            "Imp": {"resourceType": "AWS::S3::Bucket", "physicalId": bucket,
                    "observedBaselineRefused": true, "observedProperties": {"Old": true}}
        })),
    )
    .await;
    let ran = run(
        &bucket,
        &readers_from_config(&c),
        &Ssm::new(&c, Some(HOME), None),
    )
    .await;
    let t = refreshed(&ran);
    assert_eq!((t.refreshed, t.refused), (1, 1));
    let (saved, _) = stored(&bucket).await;
    let env = &saved["resources"]["F"]["observedProperties"]["Environment"]["Variables"];
    assert_eq!(env["Password"], json!(sm), "{saved}");
    assert_eq!(env["Mode"], json!("live"));
    assert!(!saved.to_string().contains("hunter2"));
    assert_eq!(
        saved["resources"]["Imp"]["observedProperties"],
        json!({"Old": true})
    );
    assert!(saved.get("skippedOutputs").is_none());
    assert_ne!(saved["lastModified"], json!(1));
    assert!(!lock_exists(&bucket).await);
}
