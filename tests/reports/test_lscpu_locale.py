"""A translated lscpu inside collect_env: its labels read as the English ones, never as a CPU model.

No real paste of a translated lscpu inside a report was found; the CPU blocks below use util-linux's own
translations, copied from po/de.po, po/zh_CN.po, po/ja.po, po/fr.po and po/es.po (github.com/util-linux/
util-linux at ebb7438a48802b21a234903da75b53092bc3c5b1; French with its no-break space before the colon,
Chinese with the full-width colon), with one machine's values: 2 sockets of 18 cores, 72 CPUs, 2 NUMA nodes.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import lscpu_locale
from driftcheck.reports.formats.pytorch_collect_env import parse

HEAD = "PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n\nCPU:\n"
TAIL = "\nVersions of relevant libraries:\n[pip3] torch==2.1.0\n"
MODEL = "Intel(R) Xeon(R) Gold 6151 CPU @ 3.00GHz"

BLOCKS = {
    "de": [
        "Architektur:                    x86_64",
        "CPU(s):                         72",
        "Liste der Online-CPU(s):        0-71",
        "Anbieterkennung:                GenuineIntel",
        f"Modellname:                     {MODEL}",
        "Thread(s) pro Kern:             2",
        "Kern(e) pro Sockel:             18",
        "Sockel:                         2",
        "NUMA-Knoten:                    2",
        "NUMA-Knoten0 CPU(s):            0-17,36-53",
        "NUMA-Knoten1 CPU(s):            18-35,54-71",
    ],
    # lscpu 2.38's tree layout: the labels under `Vendor ID` are indented.
    "zh_CN": [
        "架构：                    x86_64",
        "  CPU 运行模式：          32-bit, 64-bit",
        "CPU:                      72",
        "  在线 CPU 列表：         0-71",
        "厂商 ID：                 GenuineIntel",
        f"  型号名称：              {MODEL}",
        "    每个核的线程数：      2",
        "    每个座的核数：        18",
        "    座：                  2",
        "NUMA 节点：               2",
        "  NUMA 节点0 CPU：        0-17,36-53",
        "  NUMA 节点1 CPU：        18-35,54-71",
    ],
    "ja": [
        "アーキテクチャ:                       x86_64",
        "CPU:                                  72",
        "オンラインになっている CPU のリスト:  0-71",
        "ベンダー ID:                          GenuineIntel",
        f"モデル名:                             {MODEL}",
        "コアあたりのスレッド数:               2",
        "ソケットあたりのコア数:               18",
        "ソケット数:                           2",
        "NUMA ノード数:                        2",
        "NUMA ノード 0 CPU:                    0-17,36-53",
        "NUMA ノード 1 CPU:                    18-35,54-71",
    ],
    "fr": [
        "Architecture\u00a0:                              x86_64",
        "Processeur(s)\u00a0:                             72",
        "Liste de processeur(s) en ligne\u00a0:           0-71",
        "Identifiant constructeur\u00a0:                  GenuineIntel",
        f"Nom de modèle\u00a0:                             {MODEL}",
        "Thread(s) par cœur\u00a0:                        2",
        "Cœur(s) par socket\u00a0:                        18",
        "Socket(s)\u00a0:                                 2",
        "Nœud(s) NUMA\u00a0:                              2",
        "Nœud NUMA\u00a00 de processeur(s)\u00a0:           0-17,36-53",
        "Nœud NUMA\u00a01 de processeur(s)\u00a0:           18-35,54-71",
    ],
    "es": [
        "Arquitectura:                          x86_64",
        "CPU(s):                                72",
        "Lista de la(s) CPU(s) en línea:        0-71",
        "ID de fabricante:                      GenuineIntel",
        f"Nombre del modelo:                     {MODEL}",
        "Hilo(s) de procesamiento por núcleo:   2",
        "Núcleo(s) por «socket»:                18",
        "«Socket(s)»:                           2",
        "Modo(s) NUMA:                          2",
        "CPU(s) del nodo NUMA 0:                0-17,36-53",
        "CPU(s) del nodo NUMA 1:                18-35,54-71",
    ],
}


@pytest.mark.parametrize("language", sorted(BLOCKS))
def test_a_translated_lscpu_gives_the_cpu_facts_of_an_english_one(language: str) -> None:
    parsed = parse(HEAD + "\n".join(BLOCKS[language]) + "\n" + TAIL)
    cpu = parsed.probes["system"]["cpu"]
    assert cpu == {"model": MODEL, "vendor": "GenuineIntel", "sockets": 2, "cores": 36, "threads": 72,
                   "online": "0-71"}
    assert parsed.probes["system"]["numa"] == {"nodes": {"0": {"cpus": "0-17,36-53"}, "1": {"cpus": "18-35,54-71"}}}
    # The labels no fact takes stay raw fields under their English names.
    assert parsed.fields["lscpu: Architecture"] == "x86_64"
    assert parsed.unclaimed == []


def test_the_first_translated_line_is_never_taken_for_a_brand_string() -> None:
    parsed = parse(HEAD + "架构：                    x86_64\n" + TAIL)
    assert "cpu" not in (parsed.probes.get("system") or {})
    assert parsed.fields["lscpu: Architecture"] == "x86_64"


def test_every_translation_maps_back_and_english_labels_pass_through() -> None:
    for table in lscpu_locale.TRANSLATIONS.values():
        for english, local in table.items():
            assert lscpu_locale.english(local) == english
    assert lscpu_locale.english("Model name") == "Model name"
    assert lscpu_locale.english("NUMA node3 CPU(s)") == "NUMA node3 CPU(s)"
    assert lscpu_locale.label_and_value("型号名称：  Intel(R) Xeon(R)") == ("型号名称", "Intel(R) Xeon(R)")
    assert lscpu_locale.label_and_value("Apple M1 Pro") is None
