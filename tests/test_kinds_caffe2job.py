"""msgen.kinds.caffe2job: Caffe2Job (kubeflow.org/v1alpha1): its Plan, the backend settings and
warnings as caffe2-operator set them (no backendSpecs, redis without a host or port, backend
types), and `terminationPolicy`, accepted and unused."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds import caffe2job
from msgen.model.diagnostics import has_errors
from msgen.model.plan import Options

from .conftest import SAMPLES
from .plugin_plans import document_of, sample_plan
from .test_errors import fails
from .test_frameworks_caffe2 import caffe2_env

CAFFE2 = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()

SAMPLE = "caffe2/resnet50-redis.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('kubeflow.org/v1alpha1', 'Caffe2Job')) is caffe2job.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('kubeflow.org/v1alpha1', 'Caffe2Job')
    assert made.framework == 'caffe2'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Worker', 2)]
    assert made.success_policy == 'AllWorkers'


def test_caffe2_redis_needs_a_host() -> None:
    err = fails(CAFFE2.replace("      redisHost: redis-service\n", ""))
    assert "<stdin>:8:7: error: spec.backendSpecs: backendType redis needs redisHost" in err


def test_caffe2_backend_type_is_checked() -> None:
    err = fails(CAFFE2.replace("backendType: redis", "backendType: gloo"))
    assert "<stdin>:8:20: error: spec.backendSpecs.backendType:" in err
    assert "'redis'" in err


def test_caffe2_without_backend_gets_the_operators_empty_redis_default() -> None:
    backend = "  backendSpecs:\n      backendType: redis\n      redisHost: redis-service\n      redisPort: 6379\n"
    env, err = caffe2_env(backend, "")
    assert (env["REDIS_HOST"], env["REDIS_PORT"], env["NFS_PATH"]) == ("", "0", "")
    assert "warning: spec: no backendSpecs: caffe2-operator chose backendType redis, with no host, for 2 shards" in err
    # One shard needs no rendezvous: the operator chose backendType none, and so no warning.
    env, err = caffe2_env(backend + "  replicaSpecs:\n      replicas: 2", "  replicaSpecs:\n      replicas: 1")
    assert (env["REDIS_HOST"], env["REDIS_PORT"], env["NFS_PATH"]) == ("", "0", "") and "warning" not in err
    _, err = caffe2_env("backendType: redis\n      redisHost: redis-service\n      redisPort: 6379", "backendType: none")
    assert "warning: spec.backendSpecs: backendType none, for 2 shards" in err


def test_caffe2_redis_port_is_the_operators_zero_when_unset() -> None:
    env, err = caffe2_env("      redisPort: 6379\n", "")
    assert env["REDIS_PORT"] == "0"
    assert 'warning: spec.backendSpecs: backendType redis without redisPort: REDIS_PORT is "0"' in err


def test_caffe2_termination_policy_is_accepted_and_not_used() -> None:
    policy = "  terminationPolicy:\n    chief:\n      replicaName: worker\n      replicaIndex: 1\n  replicaSpecs:"
    _, err = caffe2_env("  replicaSpecs:", policy)
    assert "warning: spec.terminationPolicy: terminationPolicy is not used, as caffe2-operator did not use it" in err


def test_its_entry_points_on_its_sample() -> None:
    """`model` is the declaration the job is checked against; `to_plan` makes the Plan, or
    none and the errors that stop it."""
    assert caffe2job.KIND.model() is caffe2job.Caffe2Job
    made, found = caffe2job.KIND.to_plan(document_of("caffe2/resnet50-redis.yaml"), Options())
    assert made is not None and not has_errors(found), found
    assert (made.api_version, made.kind) == (caffe2job.KIND.api_version, caffe2job.KIND.kind)
    refused, found = caffe2job.KIND.to_plan(document_of("caffe2/resnet50-redis.yaml", 'name: caffe2\n', 'name: trainer\n'), Options())
    assert refused is None and has_errors(found)
