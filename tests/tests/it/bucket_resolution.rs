//! State bucket resolution against the emulator (docs/state-and-lock.md, "Which bucket" and "Three regions"; statements 1-4,
//! 7). The default names are fixed by the emulator's account (123456789012), so every
//! scenario that creates them runs inside one test, in sequence.

use cdkd_aws::bucket::{account_id, bucket_region, resolve_bucket, BucketError, BucketSource};
use cdkd_tests::*;

async fn delete_bucket(s3: &aws_sdk_s3::Client, name: &str) {
    for key in list_all_keys(s3, name).await {
        s3.delete_object()
            .bucket(name)
            .key(key)
            .send()
            .await
            .unwrap();
    }
    s3.delete_bucket().bucket(name).send().await.unwrap();
}

#[tokio::test]
async fn bucket_account_id_comes_from_sts_get_caller_identity() {
    assert_eq!(account_id(&sdk().await).await.unwrap(), EMULATOR_ACCOUNT);
}

#[tokio::test]
async fn bucket_s1_flag_wins_then_env_verbatim() {
    let sdk = sdk().await;
    let b = resolve_bucket(&sdk, Some("my-b"), Some("env-b"), None, "us-east-1")
        .await
        .unwrap();
    assert_eq!((b.name.as_str(), b.source), ("my-b", BucketSource::Flag));
    let b = resolve_bucket(&sdk, None, Some("env-b"), None, "us-east-1")
        .await
        .unwrap();
    assert_eq!((b.name.as_str(), b.source), ("env-b", BucketSource::Env));
    let b = resolve_bucket(&sdk, Some(""), Some("env-b"), None, "us-east-1")
        .await
        .unwrap();
    assert_eq!(
        b.source,
        BucketSource::Env,
        "an empty flag counts as absent"
    );
}

#[tokio::test]
async fn bucket_s2_s3_s4_default_and_legacy_default_resolution() {
    let sdk = sdk().await;
    let s3 = s3().await;
    let current = format!("cdkd-state-{EMULATOR_ACCOUNT}");
    let legacy = format!("cdkd-state-{EMULATOR_ACCOUNT}-us-east-1");

    // Neither exists: an error naming the account and both names.
    let err = resolve_bucket(&sdk, None, None, None, "us-east-1")
        .await
        .unwrap_err();
    assert!(matches!(err, BucketError::NotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&current) && msg.contains(&legacy) && msg.contains("cdkd bootstrap"),
        "{msg}"
    );

    // Statement 3: only the legacy bucket exists -> used, with the migrate warning.
    create_bucket(&s3, &legacy).await;
    let b = resolve_bucket(&sdk, None, None, None, "us-east-1")
        .await
        .unwrap();
    assert_eq!(
        (b.name.as_str(), b.source),
        (legacy.as_str(), BucketSource::LegacyDefault)
    );
    assert_eq!(b.warnings.len(), 1);
    assert!(
        b.warnings[0].contains("cdkd state migrate --region us-east-1"),
        "{:?}",
        b.warnings
    );

    // Statement 4: both exist, the new one empty under cdkd/, the legacy one not -> legacy.
    create_bucket(&s3, &current).await;
    put_raw(&s3, &legacy, "cdkd/App/us-east-1/state.json", "{}").await;
    let b = resolve_bucket(&sdk, None, None, None, "us-east-1")
        .await
        .unwrap();
    assert_eq!(b.name, legacy);
    assert_eq!(b.source, BucketSource::LegacyDefault);

    // Both exist and the new one holds state -> the new one.
    put_raw(&s3, &current, "cdkd/App/us-east-1/state.json", "{}").await;
    let b = resolve_bucket(&sdk, None, None, None, "us-east-1")
        .await
        .unwrap();
    assert_eq!(
        (b.name.as_str(), b.source),
        (current.as_str(), BucketSource::Default)
    );

    // Statement 2: only the new one exists -> used, source default, no warning.
    delete_bucket(&s3, &legacy).await;
    let b = resolve_bucket(&sdk, None, None, Some(EMULATOR_ACCOUNT), "us-east-1")
        .await
        .unwrap();
    assert_eq!(
        (b.name.as_str(), b.source),
        (current.as_str(), BucketSource::Default)
    );
    assert!(b.warnings.is_empty());

    // The legacy name uses the CLI region: another region's legacy bucket is not probed.
    delete_bucket(&s3, &current).await;
    create_bucket(&s3, &legacy).await;
    let err = resolve_bucket(&sdk, None, None, None, "eu-west-1")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("cdkd-state-{EMULATOR_ACCOUNT}-eu-west-1")),
        "{err}"
    );
    delete_bucket(&s3, &legacy).await;
}

#[tokio::test]
async fn bucket_s7_region_from_get_bucket_location() {
    let sdk = sdk().await;
    let s3 = s3().await;
    let east = fresh_bucket(&s3).await;
    assert_eq!(
        bucket_region(&sdk, &east, Some(EMULATOR_ACCOUNT)).await,
        "us-east-1"
    );
    let west = unique_bucket_name("west");
    s3.create_bucket()
        .bucket(&west)
        .create_bucket_configuration(
            aws_sdk_s3::types::CreateBucketConfiguration::builder()
                .location_constraint(aws_sdk_s3::types::BucketLocationConstraint::EuWest1)
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        bucket_region(&sdk, &west, Some(EMULATOR_ACCOUNT)).await,
        "eu-west-1"
    );
}
