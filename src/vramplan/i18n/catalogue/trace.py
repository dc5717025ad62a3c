"""Messages of `vramplan trace`, in French and English."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- help ---------------------------------------------------------------------------------
    "help.trace": {
        FR: "mesure la mémoire d'un vrai pas d'entraînement PyTorch, sur tenseurs factices, "
        "sans GPU",
        EN: "measure the memory of a real PyTorch training step, on fake tensors, without a GPU",
    },
    # --- errors -------------------------------------------------------------------------------
    "trace.failed": {
        FR: "la trace de {model} a échoué dans le code du modèle (transformers, peft, torch) : "
        "{error}. Ce n'est pas une erreur de saisie : signalez-la avec la commande utilisée",
        EN: "tracing {model} failed inside the model's own code (transformers, peft, torch): "
        "{error}. This is not an input error: please report it with the command used",
    },
    "trace.no_cuda": {
        FR: "--device cuda : aucun GPU CUDA visible par torch ; utilisez --device cpu",
        EN: "--device cuda: torch sees no CUDA GPU; use --device cpu",
    },
    "trace.error.attention_unsupported": {
        FR: "{field} : transformers n'a pas d'attention « {value} » pour {model_class} ; "
        "essayez --attention eager",
        EN: "{field}: transformers has no '{value}' attention for {model_class}; "
        "try --attention eager",
    },
    "trace.error.method_not_traced": {
        FR: "{field} : « {value} » n'est pas tracé (vramplan fit l'estime) ; une trace lance "
        "{accepted}",
        EN: "{field}: '{value}' is not traced (vramplan fit estimates it); a trace runs "
        "{accepted}",
    },
    # --- progress (stderr) --------------------------------------------------------------------
    "trace.progress.build": {
        FR: "construction de {model} (transformers, tenseurs factices)…",
        EN: "building {model} (transformers, fake tensors)…",
    },
    "trace.progress.step1": {FR: "pas 1 sur 2…", EN: "step 1 of 2…"},
    "trace.progress.step2": {FR: "pas 2 sur 2 (mesuré)…", EN: "step 2 of 2 (measured)…"},
    "trace.progress.cuda": {
        FR: "le même pas, pour de vrai, sur le GPU…",
        EN: "the same step, for real, on the GPU…",
    },
    "trace.progress.done": {FR: "fait en {seconds} s", EN: "done in {seconds} s"},
    # --- report -------------------------------------------------------------------------------
    "trace.title": {
        FR: "Trace d'un pas d'entraînement de {model} (2e de 2 pas, tenseurs {kind})",
        EN: "Trace of a training step of {model} (2nd of 2 steps, {kind} tensors)",
    },
    "trace.kind.fake": {FR: "factices", EN: "fake"},
    "trace.kind.real": {FR: "réels", EN: "real"},
    "trace.params": {
        FR: "Paramètres : {total} (entraînables : {trainable})",
        EN: "Parameters: {total} (trainable: {trainable})",
    },
    "trace.peak": {
        FR: "Pic : {gb} ({gib}), pendant la phase {phase}",
        EN: "Peak: {gb} ({gib}), during {phase}",
    },
    "trace.per_phase": {FR: "Pic de chaque phase", EN: "Peak of each phase"},
    "trace.total": {FR: "total", EN: "total"},
    "trace.paged": {
        FR: "États de l'optimiseur en mémoire gérée CUDA (paginée), hors pic : {gb}",
        EN: "Optimizer states in CUDA managed (paged) memory, outside the peak: {gb}",
    },
    "trace.emulated": {FR: "ÉMULÉ : {what}", EN: "EMULATED: {what}"},
    # --- what a trace emulates or leaves out (vramplan.tracer's LABEL_* texts, in English in
    # its result and JSON; `trace_label_key` finds their entries) -------------------------------
    "trace.label.4bit": {
        FR: "poids 4 bits de bitsandbytes (stockage et déquantification émulés)",
        EN: "bitsandbytes 4-bit weights (storage and dequantization emulated)",
    },
    "trace.label.8bit": {
        FR: "états 8 bits de l'optimiseur bitsandbytes (stockage émulé, mise à jour non "
        "calculée)",
        EN: "bitsandbytes 8-bit optimizer states (storage emulated, update not computed)",
    },
    "trace.label.paged": {
        FR: "états paginés de l'optimiseur bitsandbytes (mémoire gérée, comptée à part)",
        EN: "bitsandbytes paged optimizer states (managed memory, reported apart)",
    },
    "trace.label.dropout": {
        FR: "dropout comme sur CUDA (masque d'un octet de native_dropout, pas le tenseur de "
        "bruit du CPU)",
        EN: "dropout as on CUDA (native_dropout's one-byte mask, not CPU's noise tensor)",
    },
    "trace.label.sdpa_dropout": {
        FR: "dropout d'attention de SDPA comme le font les noyaux fusionnés de CUDA (le masque "
        "régénéré à partir d'une graine en rétropropagation, aucune probabilité gardée)",
        EN: "SDPA's attention dropout as CUDA's fused kernels run it (the mask drawn again from "
        "a seed in backward, no probabilities kept)",
    },
    "trace.label.flash": {
        FR: "FlashAttention comme le noyau SDPA fusionné de PyTorch (les mêmes tenseurs gardés)",
        EN: "FlashAttention as PyTorch's fused SDPA kernel (the same saved tensors)",
    },
    "trace.label.autocast": {
        FR: "autocast avec les listes de conversion de CUDA (pow, softmax, layer_norm, sum... "
        "en fp32)",
        EN: "autocast with CUDA's cast lists (pow, softmax, layer_norm, sum... in fp32)",
    },
    "trace.label.no_generation": {
        FR: "la génération des complétions : le pas tracé est le micro-pas d'entraînement qui "
        "la suit, sur des complétions aléatoires",
        EN: "generating the completions: the step traced is the training micro-step that "
        "follows it, on random completions",
    },
    "trace.cuda": {
        FR: "GPU {name} : torch.cuda.max_memory_allocated {allocated}, "
        "max_memory_reserved {reserved}",
        EN: "GPU {name}: torch.cuda.max_memory_allocated {allocated}, "
        "max_memory_reserved {reserved}",
    },
    "trace.allocator": {
        FR: "Allocateur CUDA simulé (chaque allocation et libération rejouée) : réservé au pic "
        "{reserved} ({reserved_gib}), alloué au pic {allocated}, en cache au pic de réservé "
        "{cached} ({share} %)",
        EN: "Simulated CUDA caching allocator (every allocation and free replayed): reserved peak "
        "{reserved} ({reserved_gib}), allocated peak {allocated}, cached at the reserved peak "
        "{cached} ({share} %)",
    },
    "trace.notice": {
        FR: "Compte la mémoire des tenseurs alloués (arrondie à 512 octets comme l'allocateur "
        "CUDA) ; le réservé est celui de l'allocateur simulé. "
        "Non compté : contexte CUDA, espaces de travail cuBLAS/attention (voir docs/trace.md).",
        EN: "Counts allocated tensor memory (rounded to 512 bytes like the CUDA allocator); "
        "reserved is the simulated allocator's. "
        "Not counted: CUDA context, cuBLAS/attention workspaces (see docs/trace.md).",
    },
    "part.temporaries": {FR: "temporaires", EN: "temporaries"},
    "trace.phase.forward": {FR: "propagation avant", EN: "forward"},
    "trace.phase.loss": {FR: "perte", EN: "loss"},
    "trace.phase.backward": {FR: "rétropropagation", EN: "backward"},
    "trace.phase.optimizer_step": {FR: "pas de l'optimiseur", EN: "optimizer step"},
    "trace.phase.zero_grad": {FR: "remise à zéro des gradients", EN: "zero_grad"},
    "trace.phase.log_probs": {
        FR: "log-probabilités sans gradient (référence)",
        EN: "log-probabilities without gradient (reference)",
    },
    "trace.phase.reference_pass": {
        FR: "passe de la référence (graphe de la politique vivant)",
        EN: "reference pass (the policy's graph alive)",
    },
    "trace.not_traced": {FR: "NON TRACÉ : {what}", EN: "NOT TRACED: {what}"},
}


def trace_label_key(label: str) -> str | None:
    """The catalogue key of a tracer label given in English (`TraceResult.emulated`,
    `not_traced`), or None for a label the catalogue does not hold."""
    return next((key for key, texts in MESSAGES.items()
                 if key.startswith("trace.label.") and texts[EN] == label), None)
