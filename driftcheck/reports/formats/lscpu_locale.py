"""lscpu's key names in the locales users paste, mapped back to the English names the readers know.

lscpu translates its labels through gettext, so a report from a machine with `LANG=zh_CN.UTF-8` holds
`型号名称：  Intel(R) Xeon(R) ...` where an English one holds `Model name:`. The translations below are
util-linux's own (po/de.po, po/zh_CN.po, po/ja.po, po/fr.po, po/es.po of github.com/util-linux/util-linux
at commit ebb7438a48802b21a234903da75b53092bc3c5b1; fuzzy entries left out, as gettext never prints them),
for the labels whose values become facts and the common ones kept as raw fields. A label's colon may be
the full-width `：` (Chinese) or follow a no-break space (French); `label_and_value` splits either.
"""

from __future__ import annotations

import re

# English label → its translation, per language; the msgstr of each msgid, without the colon.
TRANSLATIONS: dict[str, dict[str, str]] = {
    "de": {
        "Architecture": "Architektur",
        "CPU op-mode(s)": "CPU Operationsmodus",
        "Byte Order": "Byte-Reihenfolge",
        "On-line CPU(s) list": "Liste der Online-CPU(s)",
        "Off-line CPU(s) list": "Liste der Offline-CPU(s)",
        "Model name": "Modellname",
        "Vendor ID": "Anbieterkennung",
        "Socket(s)": "Sockel",
        "Core(s) per socket": "Kern(e) pro Sockel",
        "Core(s) per cluster": "Kern(e) pro Cluster",
        "Thread(s) per core": "Thread(s) pro Kern",
        "NUMA node(s)": "NUMA-Knoten",
        "Model": "Modell",
        "CPU family": "Prozessorfamilie",
        "Flags": "Markierungen",
        "Virtualization": "Virtualisierung",
        "Hypervisor vendor": "Hypervisor-Anbieter",
        "Virtualization type": "Virtualisierungstyp",
        "CPU max MHz": "Maximale Taktfrequenz der CPU",
        "CPU min MHz": "Minimale Taktfrequenz der CPU",
        "Address sizes": "Adressgrößen",
    },
    "zh_CN": {
        "Architecture": "架构",
        "CPU op-mode(s)": "CPU 运行模式",
        "Byte Order": "字节序",
        "CPU(s)": "CPU",
        "On-line CPU(s) list": "在线 CPU 列表",
        "Off-line CPU(s) list": "离线 CPU 列表",
        "Model name": "型号名称",
        "Vendor ID": "厂商 ID",
        "Socket(s)": "座",
        "Core(s) per socket": "每个座的核数",
        "Thread(s) per core": "每个核的线程数",
        "NUMA node(s)": "NUMA 节点",
        "Model": "型号",
        "Stepping": "步进",
        "CPU family": "CPU 系列",
        "Flags": "标记",
        "Virtualization": "虚拟化",
        "Hypervisor vendor": "超管理器厂商",
        "Virtualization type": "虚拟化类型",
        "CPU max MHz": "CPU 最大 MHz",
        "CPU min MHz": "CPU 最小 MHz",
    },
    "ja": {
        "Architecture": "アーキテクチャ",
        "CPU op-mode(s)": "CPU 操作モード",
        "Byte Order": "バイト順序",
        "CPU(s)": "CPU",
        "On-line CPU(s) list": "オンラインになっている CPU のリスト",
        "Off-line CPU(s) list": "オフラインになっている CPU のリスト",
        "Model name": "モデル名",
        "Vendor ID": "ベンダー ID",
        "Socket(s)": "ソケット数",
        "Core(s) per socket": "ソケットあたりのコア数",
        "Core(s) per cluster": "クラスタあたりのコア数",
        "Thread(s) per core": "コアあたりのスレッド数",
        "NUMA node(s)": "NUMA ノード数",
        "Model": "モデル",
        "Stepping": "ステッピング",
        "CPU family": "CPU ファミリー",
        "Flags": "フラグ",
        "Virtualization": "仮想化",
        "Hypervisor vendor": "ハイパーバイザのベンダー",
        "Virtualization type": "仮想化タイプ",
        "CPU max MHz": "CPU 最大 MHz",
        "CPU min MHz": "CPU 最小 MHz",
        "Address sizes": "アドレスサイズ",
    },
    "fr": {
        "Architecture": "Architecture",
        "CPU op-mode(s)": "Mode(s) opératoire(s) des processeurs",
        "Byte Order": "Boutisme",
        "CPU(s)": "Processeur(s)",
        "On-line CPU(s) list": "Liste de processeur(s) en ligne",
        "Off-line CPU(s) list": "Liste de processeur(s) hors ligne",
        "Model name": "Nom de modèle",
        "Vendor ID": "Identifiant constructeur",
        "Socket(s)": "Socket(s)",
        "Core(s) per socket": "Cœur(s) par socket",
        "Core(s) per cluster": "Cœur(s) par cluster",
        "Thread(s) per core": "Thread(s) par cœur",
        "NUMA node(s)": "Nœud(s) NUMA",
        "Model": "Modèle",
        "Stepping": "Révision",
        "CPU family": "Famille de processeur",
        "Flags": "Drapeaux",
        "Virtualization": "Virtualisation",
        "Hypervisor vendor": "Constructeur d'hyperviseur",
        "Virtualization type": "Type de virtualisation",
        "CPU max MHz": "Vitesse maximale du processeur en MHz",
        "CPU min MHz": "Vitesse minimale du processeur en MHz",
        "Address sizes": "Tailles des adresses",
    },
    "es": {
        "Architecture": "Arquitectura",
        "CPU op-mode(s)": "modo(s) de operación de las CPUs",
        "Byte Order": "Orden de los bytes",
        "CPU(s)": "CPU(s)",
        "On-line CPU(s) list": "Lista de la(s) CPU(s) en línea",
        "Model name": "Nombre del modelo",
        "Vendor ID": "ID de fabricante",
        "Socket(s)": "«Socket(s)»",
        "Core(s) per socket": "Núcleo(s) por «socket»",
        "Core(s) per cluster": "Núcleo(s) por «cluster»",
        "Thread(s) per core": "Hilo(s) de procesamiento por núcleo",
        "NUMA node(s)": "Modo(s) NUMA",
        "Model": "Modelo",
        "Stepping": "Revisión",
        "CPU family": "Familia de CPU",
        "Flags": "Indicadores",
        "Virtualization": "Virtualización",
        "Hypervisor vendor": "Fabricante del hipervisor",
        "Virtualization type": "Tipo de virtualización",
        "CPU max MHz": "CPU MHz máx.",
        "CPU min MHz": "CPU MHz mín.",
        "Address sizes": "Tamaños de las direcciones",
    },
}
# `NUMA node%d CPU(s):` per language (the msgstr with %d as the node number).
NUMA_NODE_TEMPLATES: dict[str, str] = {"en": "NUMA node%d CPU(s)", "de": "NUMA-Knoten%d CPU(s)",
                                       "zh_CN": "NUMA 节点%d CPU", "ja": "NUMA ノード %d CPU",
                                       "fr": "Nœud NUMA %d de processeur(s)", "es": "CPU(s) del nodo NUMA %d"}

_SPACES = re.compile(r"[\s\u00a0]+")


def _norm(label: str) -> str:
    """A label as compared: no-break spaces as spaces, runs of spaces as one, no surrounding space."""
    return _SPACES.sub(" ", label).strip()


_TO_ENGLISH: dict[str, str] = {}
for _table in TRANSLATIONS.values():
    for _english, _local in _table.items():
        # A language that keeps the English word (de `CPU(s)`, fr `Socket(s)`) maps it to itself; never let one
        # language's word for one label shadow another's English label.
        _TO_ENGLISH.setdefault(_norm(_local), _english)
_NUMA_NODE = [re.compile("^" + re.escape(_norm(t)).replace("%d", r"(\d+)") + "$") for t in NUMA_NODE_TEMPLATES.values()]
_LABEL = re.compile(r"^(?P<label>[^:：]{1,80}?)[\s\u00a0]*[:：][\s\u00a0]*(?P<value>.*)$")


def label_and_value(line: str) -> tuple[str, str] | None:
    """An lscpu line's label (as printed, colon removed) and value; None when the line has no colon."""
    match = _LABEL.match(line.strip())
    if not match:
        return None
    return _norm(match["label"]), match["value"].strip()


def english(label: str) -> str:
    """The English label of a translated one (`型号名称` → `Model name`); any other label as it is."""
    label = _norm(label)
    for pattern in _NUMA_NODE:
        node = pattern.match(label)
        if node:
            return f"NUMA node{node.group(1)} CPU(s)"
    return _TO_ENGLISH.get(label, label)
