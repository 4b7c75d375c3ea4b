"""TLS: a job runs over tls:// with certificate files named in a cluster file; plain TCP is refused."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest

from epcg.runtime.cluster import TLS, LocalSpec, connect

from .conftest import epcg, load_results

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def _certificates(folder: Path) -> TLS:
    """A throwaway CA and a node certificate for 127.0.0.1, as PEM files."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "epcg test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    node = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "node.pem").write_bytes(node.public_bytes(pem))
    (folder / "node-key.pem").write_bytes(key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return TLS(ca_file=folder / "ca.pem", cert=folder / "node.pem", key=folder / "node-key.pem")


@pytest.mark.slow
def test_job_over_tls_and_plain_tcp_refused(tmp_path: Path, small_job: Path) -> None:
    tls = _certificates(tmp_path)
    reference = tmp_path / "reference"
    assert epcg("run", str(small_job), "--out", str(reference), "--serial").returncode == 0

    with connect(LocalSpec(workers=1, dashboard_address=None, tls=tls)) as client:
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        cluster_file = tmp_path / "scheduler.toml"
        cluster_file.write_text(
            f'kind = "scheduler"\naddress = "{address}"\n[tls]\n'
            f'ca_file = "{tls.ca_file}"\ncert = "{tls.cert}"\nkey = "{tls.key}"\n'
        )
        out = tmp_path / "tls"
        result = epcg("run", str(small_job), "--out", str(out), "--cluster", str(cluster_file))
        assert result.returncode == 0, result.stderr
        assert load_results(out) == load_results(reference)

        plain = epcg("run", str(small_job), "--out", str(tmp_path / "plain"),
                     "--scheduler", address.replace("tls://", "tcp://"))
        assert plain.returncode == 2 and "cannot reach scheduler" in plain.stderr
        assert not (tmp_path / "plain").exists()


def test_cluster_file_errors(tmp_path: Path, small_job: Path) -> None:
    bad = tmp_path / "bad.toml"
    for text, message in [
        ('kind = "kubernetes"\n', "'kind' must be one of"),
        ('kind = ["local"]\n', "'kind' must be one of"),
        ('kind = {local = true}\n', "'kind' must be one of"),
        ('kind = "local"\nworkerz = 2\n', "unknown key 'workerz'"),
        ('kind = "scheduler"\n', "exactly one of 'address' and 'scheduler_file'"),
        ('kind = "slurm"\ncores = 2\n', "missing key 'memory'"),
        ('kind = "local"\n[tls]\nca_file = "no.pem"\ncert = "no.pem"\nkey = "no.pem"\n', "does not exist"),
    ]:
        bad.write_text(text)
        result = epcg("run", str(small_job), "--out", str(tmp_path / "out"), "--cluster", str(bad))
        assert result.returncode == 2 and message in result.stderr, (text, result.stderr)
        assert not (tmp_path / "out").exists()
