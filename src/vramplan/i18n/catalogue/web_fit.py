"""Messages of the page's "Activations" estimate and "Will it fit?" section, in French and
English. The verdict, limits and change tables reuse `vramplan fit`'s messages (locales/fit.py)."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- Activations group: batch, sequence length, method, and the estimate ------------------
    "web_fit.batch": {FR: "Micro-lot (séquences)", EN: "Micro-batch (sequences)"},
    "web_fit.seq_len": {FR: "Longueur de séquence (jetons)", EN: "Sequence length (tokens)"},
    "web_fit.method": {FR: "Méthode d'entraînement", EN: "Training method"},
    "web_fit.method.full": {FR: "Tous les poids (affinage complet)",
                            EN: "All weights (full fine-tuning)"},
    "web_fit.method.freeze": {FR: "Derniers blocs seuls (autres gelés)",
                              EN: "Last blocks only (others frozen)"},
    "web_fit.method.lora": {FR: "LoRA", EN: "LoRA"},
    "web_fit.method.qlora": {FR: "QLoRA (base 4 bits)", EN: "QLoRA (4-bit base)"},
    "web_fit.method.dpo": {FR: "DPO (TRL)", EN: "DPO (TRL)"},
    "web_fit.method.orpo": {FR: "ORPO (TRL)", EN: "ORPO (TRL)"},
    "web_fit.method.simpo": {FR: "SimPO (TRL)", EN: "SimPO (TRL)"},
    "web_fit.method.kto": {FR: "KTO (TRL)", EN: "KTO (TRL)"},
    "web_fit.method.ppo": {FR: "PPO (TRL)", EN: "PPO (TRL)"},
    "web_fit.method.grpo": {FR: "GRPO (TRL)", EN: "GRPO (TRL)"},
    # --- preference and RL methods: the policy, the generation ---------------------------------
    "web_fit.policy": {FR: "Politique entraînée", EN: "Policy trained as"},
    "web_fit.alignment": {
        FR: "{method}, politique {policy}, référence : {reference}",
        EN: "{method}, policy {policy}, reference: {reference}",
    },
    "web_fit.generation": {FR: "Génération", EN: "Generation"},
    "web_fit.generation.model": {FR: "generate de transformers (même GPU)",
                                 EN: "transformers' generate (same GPU)"},
    "web_fit.generation.vllm-colocate": {FR: "vLLM colocalisé (même GPU)",
                                         EN: "vLLM colocated (same GPU)"},
    "web_fit.generation.vllm-server": {FR: "serveur vLLM (autres GPU)",
                                       EN: "vLLM server (other GPUs)"},
    "web_fit.completion_len": {FR: "Jetons générés par séquence",
                               EN: "Generated tokens per sequence"},
    "web_fit.completion_len_hint": {
        FR: "Compris dans la longueur de séquence ; vide : défaut de TRL (512 pour GRPO, 53 "
        "pour PPO).",
        EN: "Part of the sequence length; empty: TRL's default (512 for GRPO, 53 for PPO).",
    },
    "web_fit.vllm_share": {FR: "Part du GPU pour vLLM", EN: "vLLM's share of the GPU"},
    "web_fit.vllm_share_hint": {
        FR: "gpu_memory_utilization, entre 0 et 1 (0,3 par défaut dans TRL).",
        EN: "gpu_memory_utilization, between 0 and 1 (0.3 by default in TRL).",
    },
    "web_fit.precompute_ref": {FR: "Référence précalculée", EN: "Precomputed reference"},
    "web_fit.vllm_sleep": {FR: "vLLM en veille", EN: "vLLM asleep"},
    "web_fit.value_adapters": {FR: "Modèle de valeur avec les adaptateurs",
                               EN: "Value model with the adapters"},
    "web_fit.beta": {FR: "Poids KL (beta)", EN: "KL weight (beta)"},
    "web_fit.yes": {FR: "oui", EN: "yes"},
    "web_fit.no": {FR: "non", EN: "no"},
    "web_fit.col_phase": {FR: "Phase", EN: "Phase"},
    "web_fit.col_phase_peak": {FR: "Pic (alloué)", EN: "Peak (allocated)"},
    "web_fit.max_completion_len": {
        FR: "Plus longue complétion qui tient : {value} jetons",
        EN: "Longest completion that fits: {value} tokens",
    },
    "web_fit.max_completion_len_none": {
        FR: "Plus longue complétion qui tient : aucune", EN: "Longest completion that fits: none",
    },
    # --- LoRA settings (LoRA and QLoRA), as the LoRA calculator hands them over -----------------
    "web_fit.lora_r": {FR: "Rang LoRA r", EN: "LoRA rank r"},
    "web_fit.lora_r_hint": {
        FR: "Entier, 8 par défaut (peft, LitGPT).",
        EN: "A whole number, 8 by default (peft, LitGPT).",
    },
    "web_fit.lora_targets": {FR: "Modules adaptés", EN: "Adapted modules"},
    "web_fit.lora_only": {
        FR: "Pour LoRA et QLoRA seulement.", EN: "For LoRA and QLoRA only.",
    },
    "web_fit.act_title": {
        FR: "Estimer à partir du lot et de la longueur de séquence",
        EN: "Estimate from batch and sequence length",
    },
    "web_fit.act_value": {FR: "A estimée : {value}", EN: "Estimated A: {value}"},
    "web_fit.act_setup": {
        FR: "{model}, lot {batch} × {seq_len} jetons, {method} ; précision mixte, attention "
        "SDPA, sans checkpointing, comme transformers l'exécute (modèle détaillé).",
        EN: "{model}, batch {batch} × {seq_len} tokens, {method}; mixed precision, SDPA "
        "attention, no checkpointing, as transformers runs it (detailed model).",
    },
    "web_fit.act_use": {FR: "Utiliser {value} Go comme A", EN: "Use {value} GB as A"},
    "web_fit.act_semantics": {
        FR: "Le calcul simple reste V = M + A : le bouton copie cette estimation dans « Mémoire "
        "d'activations », que vous pouvez ensuite modifier.",
        EN: "The simple rule stays V = M + A: the button copies this estimate into \"Activation "
        "memory\", which you can still edit.",
    },
    "web_fit.act_needs_model": {
        FR: "Choisissez un modèle pré-défini pour estimer A à partir du lot et de la longueur "
        "de séquence.",
        EN: "Pick a preset model to estimate A from the batch and the sequence length.",
    },
    # --- Will it fit? inputs ------------------------------------------------------------------
    "web_fit.title": {
        FR: "Modèle détaillé : pic par GPU et quoi changer",
        EN: "Detailed model: peak per GPU and what to change",
    },
    "web_fit.intro": {
        FR: "Pour le modèle, la méthode, le lot, la séquence et les GPU des « Données » : la "
        "mémoire par GPU au pic (activations comprises) sur laquelle repose le verdict, ce qui "
        "tient au plus, et quoi changer pour tenir.",
        EN: "For the model, method, batch, sequence and GPUs from \"Inputs\": the memory per GPU "
        "at the peak (activations included) behind the verdict, the most that fits, and what to "
        "change to fit.",
    },
    "web_fit.group": {FR: "Réglages du modèle détaillé", EN: "Detailed model settings"},
    "web_fit.gpu_group": {FR: "GPU", EN: "GPUs"},
    "web_fit.gpu": {FR: "Type de GPU", EN: "GPU type"},
    "web_fit.gpus": {FR: "Nombre de GPU", EN: "Number of GPUs"},
    "web_fit.gpus_hint": {FR: "Entier, 1 ou plus.", EN: "A whole number, 1 or more."},
    "web_fit.sharding": {FR: "Partage entre GPU", EN: "Sharding across GPUs"},
    "web_fit.auto": {
        FR: "automatique (DDP sur plusieurs GPU)", EN: "automatic (DDP on several GPUs)",
    },
    "web_fit.offload": {FR: "Déchargement vers le CPU", EN: "CPU offload"},
    "web_fit.precision": {FR: "Précision", EN: "Precision"},
    "web_fit.checkpointing": {FR: "Checkpointing des activations",
                              EN: "Activation checkpointing"},
    "web_fit.margin": {FR: "Part utilisable de la mémoire (%)", EN: "Usable share of memory (%)"},
    "web_fit.margin_hint": {
        FR: "80 % par défaut (Fujii et al. 2024) ; 100 = sans marge.",
        EN: "80% by default (Fujii et al. 2024); 100 = no margin.",
    },
    # --- Will it fit? results ------------------------------------------------------------------
    "web_fit.needs_model": {
        FR: "Le modèle détaillé (activations, partage entre GPU, quoi changer) demande un modèle "
        "pré-défini : choisissez-en un dans « Données ». Le verdict ci-dessus vient alors de lui.",
        EN: "The detailed model (activations, sharding across GPUs, what to change) needs a "
        "preset model: pick one in \"Inputs\". The verdict above then comes from it.",
    },
    "web_fit.title_line": {
        FR: "{model} sur {gpus} × {gpu}, partage : {sharding}",
        EN: "{model} on {gpus} × {gpu}, sharding: {sharding}",
    },
    "web_fit.title_offload": {
        FR: "{title}, déchargement : {offload}", EN: "{title}, offload: {offload}",
    },
    "web_fit.setup": {
        FR: "{method} ; précision : {precision} ; optimiseur : {optimizer} ; lot : {batch} × "
        "{seq_len} jetons ; checkpointing : {checkpointing} ; attention : {attention} ; comme "
        "{framework} l'exécute.",
        EN: "{method}; precision: {precision}; optimizer: {optimizer}; batch: {batch} × "
        "{seq_len} tokens; checkpointing: {checkpointing}; attention: {attention}; as "
        "{framework} runs it.",
    },
    "web_fit.setup_lora": {
        FR: "{setup} LoRA : rang {rank}, modules {targets}.",
        EN: "{setup} LoRA: rank {rank}, modules {targets}.",
    },
    "web_fit.per_gpu": {
        FR: "Mémoire par GPU au pic ({phase}), telle que {metric} :",
        EN: "Memory per GPU at the peak ({phase}), as {metric}:",
    },
    "web_fit.peak_line": {
        FR: "Pic par GPU : {peak}, pour {usable} utilisables ({share} % de {capacity}).",
        EN: "Peak per GPU: {peak}, for {usable} usable ({share}% of {capacity}).",
    },
    "web_fit.max_batch": {
        FR: "Plus grand micro-lot qui tient : {value}",
        EN: "Largest micro-batch that fits: {value}",
    },
    "web_fit.max_batch_none": {
        FR: "Plus grand micro-lot qui tient : aucun", EN: "Largest micro-batch that fits: none",
    },
    "web_fit.max_seq_len": {
        FR: "Plus longue séquence qui tient : {value} jetons",
        EN: "Longest sequence that fits: {value} tokens",
    },
    "web_fit.max_seq_len_none": {
        FR: "Plus longue séquence qui tient : aucune", EN: "Longest sequence that fits: none",
    },
    "web_fit.cheapest": {
        FR: "Combinaison la moins coûteuse : {gpus} × {gpu}, partage {sharding}, déchargement "
        "{offload}",
        EN: "Cheapest combination: {gpus} × {gpu}, {sharding} sharding, {offload} offload",
    },
    "web_fit.custom_optimizer": {
        FR: "(Mémoire par paramètre personnalisée : l'estimation détaillée suppose AdamW.)",
        EN: "(Custom memory per parameter: the detailed estimate assumes AdamW.)",
    },
    "web_fit.margin_line": {
        FR: "Marge de sécurité : on vise au plus {share} % de la mémoire du GPU (réglable "
        "ci-dessus).",
        EN: "Safety margin: plan for at most {share}% of the GPU's memory (adjustable above).",
    },
    "web_fit.chart_title": {
        FR: "Mémoire par GPU : {total} au pic, {usable} utilisables sur {capacity}",
        EN: "Memory per GPU: {total} at the peak, {usable} usable of {capacity}",
    },
    "web_fit.line_usable": {FR: "utilisable {value}", EN: "usable {value}"},
    "web_fit.line_capacity": {FR: "capacité {value}", EN: "capacity {value}"},
    "web_fit.limits": {FR: "Ce qui tient au plus", EN: "The most that fits"},
    "web_fit.changes_title": {FR: "Quoi changer pour tenir", EN: "What to change to fit"},
    "web_fit.combined_title": {FR: "Changements combinés", EN: "Changes combined"},
    "web_fit.col_source": {FR: "source", EN: "source"},
    "web_fit.setting": {FR: "{field} : {value}", EN: "{field}: {value}"},
    "web_fit.notice": {
        FR: "Estimation de premier ordre : vérifiez sur une véritable étape d'entraînement.",
        EN: "First-order estimate: check on a real training step.",
    },
    "web_fit.json_link": {FR: "Ce résultat en JSON", EN: "This result as JSON"},
    # --- the options' words: every value a select offers or a setting names ---------------------
    "web_fit.precision.mixed": {
        FR: "mixte (16 bits + copie fp32)", EN: "mixed (16-bit + fp32 master copy)",
    },
    "web_fit.precision.amp": {
        FR: "autocast (poids fp32, calculs 16 bits)", EN: "autocast (fp32 weights, 16-bit maths)",
    },
    "web_fit.precision.bf16-true": {
        FR: "bf16 seulement (sans copie fp32)", EN: "bf16 only (no fp32 copy)",
    },
    "web_fit.precision.fp32": {FR: "32 bits (fp32)", EN: "32-bit (fp32)"},
    "web_fit.sharding.none": {FR: "aucun", EN: "none"},
    "web_fit.sharding.ddp": {FR: "DDP (tout sur chaque GPU)", EN: "DDP (everything on each GPU)"},
    "web_fit.sharding.zero1": {
        FR: "ZeRO-1 (optimiseur partagé)", EN: "ZeRO-1 (optimizer sharded)",
    },
    "web_fit.sharding.zero2": {
        FR: "ZeRO-2 (+ gradients partagés)", EN: "ZeRO-2 (+ gradients sharded)",
    },
    "web_fit.sharding.zero3": {FR: "ZeRO-3 (+ poids partagés)", EN: "ZeRO-3 (+ weights sharded)"},
    "web_fit.sharding.fsdp": {FR: "FSDP (tout partagé)", EN: "FSDP (everything sharded)"},
    "web_fit.sharding.fsdp-grad-op": {
        FR: "FSDP SHARD_GRAD_OP (comme ZeRO-2)", EN: "FSDP SHARD_GRAD_OP (like ZeRO-2)",
    },
    "web_fit.sharding.hsdp": {
        FR: "HSDP (partagé dans le nœud)", EN: "HSDP (sharded within a node)",
    },
    "web_fit.offload.none": {FR: "aucun", EN: "none"},
    "web_fit.offload.optimizer": {
        FR: "optimiseur (ZeRO-Offload)", EN: "optimizer (ZeRO-Offload)",
    },
    "web_fit.offload.params-optimizer": {
        FR: "paramètres et optimiseur", EN: "parameters and optimizer",
    },
    "web_fit.offload.activations": {FR: "activations", EN: "activations"},
    "web_fit.checkpointing.none": {FR: "aucun", EN: "none"},
    "web_fit.checkpointing.full": {
        FR: "complet (chaque bloc recalculé)", EN: "full (every block recomputed)",
    },
    "web_fit.checkpointing.selective": {
        FR: "sélectif (cœur de l'attention)", EN: "selective (attention core)",
    },
    "web_fit.attention.eager": {FR: "naïve (eager)", EN: "eager"},
    "web_fit.attention.sdpa": {FR: "SDPA", EN: "SDPA"},
    "web_fit.attention.flash": {FR: "FlashAttention", EN: "FlashAttention"},
    "web_fit.loss.standard": {FR: "entière", EN: "whole"},
    "web_fit.loss.chunked": {FR: "par morceaux", EN: "chunked"},
    "web_fit.optimizer.adamw": {FR: "AdamW", EN: "AdamW"},
    "web_fit.optimizer.adamw-8bit": {FR: "AdamW 8 bits", EN: "8-bit AdamW"},
    "web_fit.optimizer.paged-adamw": {FR: "AdamW paginé", EN: "paged AdamW"},
    "web_fit.optimizer.paged-adamw-8bit": {FR: "AdamW 8 bits paginé", EN: "paged 8-bit AdamW"},
    "web_fit.optimizer.sgd-momentum": {FR: "SGD avec moment", EN: "SGD with momentum"},
    "web_fit.optimizer.sgd": {FR: "SGD", EN: "SGD"},
    "web_fit.optimizer.adafactor": {FR: "Adafactor", EN: "Adafactor"},
    "web_fit.optimizer.none": {FR: "aucun", EN: "none"},
    "web_fit.quant.none": {FR: "aucune", EN: "none"},
    "web_fit.quant.nf4": {FR: "NF4", EN: "NF4"},
    "web_fit.quant.nf4-dq": {
        FR: "NF4 à double quantification", EN: "NF4 with double quantization",
    },
    "web_fit.quant.fp4": {FR: "FP4", EN: "FP4"},
    "web_fit.quant.fp4-dq": {
        FR: "FP4 à double quantification", EN: "FP4 with double quantization",
    },
    "web_fit.quant.int8": {FR: "int8 (LLM.int8())", EN: "int8 (LLM.int8())"},
    "web_fit.metric.allocated": {
        FR: "PyTorch l'alloue (max_memory_allocated)",
        EN: "PyTorch allocates it (max_memory_allocated)",
    },
    "web_fit.metric.reserved": {
        FR: "l'allocateur de PyTorch la réserve (max_memory_reserved)",
        EN: "PyTorch's allocator reserves it (max_memory_reserved)",
    },
    "web_fit.metric.device": {
        FR: "la carte la voit (réservée + contexte CUDA, comme nvidia-smi)",
        EN: "the card sees it (reserved + CUDA context, as nvidia-smi)",
    },
    "web_fit.framework.hf": {FR: "Hugging Face transformers", EN: "Hugging Face transformers"},
    "web_fit.framework.litgpt": {FR: "LitGPT", EN: "LitGPT"},
    "web_fit.framework.torchtune": {FR: "torchtune", EN: "torchtune"},
    "web_fit.framework.deepspeed": {FR: "DeepSpeed", EN: "DeepSpeed"},
    "web_fit.framework.megatron": {FR: "Megatron-LM", EN: "Megatron-LM"},
    "web_fit.framework.torchtitan": {FR: "torchtitan", EN: "torchtitan"},
    "web_fit.framework.axolotl": {FR: "Axolotl", EN: "Axolotl"},
    "web_fit.framework.llamafactory": {FR: "LLaMA-Factory", EN: "LLaMA-Factory"},
    "web_fit.framework.unsloth": {FR: "Unsloth", EN: "Unsloth"},
    "web_fit.framework.accelerate": {FR: "Hugging Face Accelerate", EN: "Hugging Face Accelerate"},
    "web_fit.framework.generic": {FR: "une boucle PyTorch", EN: "a PyTorch loop"},
    "web_fit.grad_accum": {
        FR: "Accumulation de gradients (pas)", EN: "Gradient accumulation (steps)",
    },
    "web_fit.quant": {FR: "Quantification de la base", EN: "Base quantization"},
    "web_fit.loss": {FR: "Perte", EN: "Loss"},
    "web_fit.attention": {FR: "Attention", EN: "Attention"},
    "web_fit.optimizer": {FR: "Optimiseur", EN: "Optimizer"},
    # --- where each change's cost comes from (planner/changes.py, CHANGE_COSTS), in both ----------
    "web_fit.source.attention_kernel": {
        FR: "Dao et al. 2022, FlashAttention, arXiv:2205.14135 : attention exacte, plus rapide, "
        "mémoire linéaire en la longueur de séquence",
        EN: "Dao et al. 2022, FlashAttention, arXiv:2205.14135: exact attention, faster, memory "
        "linear in sequence length",
    },
    "web_fit.source.chunked_loss": {
        FR: "Hsu et al. 2024, Liger Kernel, arXiv:2410.10989 (entropie croisée linéaire fusionnée) "
        ": la même perte sans matérialiser tous les logits",
        EN: "Hsu et al. 2024, Liger Kernel, arXiv:2410.10989 (fused linear cross entropy): the "
        "same loss without materializing all logits",
    },
    "web_fit.source.checkpointing": {
        FR: "Chen et al. 2016, arXiv:1604.06174 (une passe avant de plus par pas) ; Korthikanti "
        "et al. 2022, arXiv:2205.05198, section 5 (recalcul complet : 30 à 40 % de surcoût)",
        EN: "Chen et al. 2016, arXiv:1604.06174 (one extra forward per step); Korthikanti et al. "
        "2022, arXiv:2205.05198, section 5 (full recomputation: 30-40% overhead)",
    },
    "web_fit.source.optimizer_8bit": {
        FR: "Dettmers et al. 2022, 8-bit Optimizers via Block-wise Quantization, "
        "arXiv:2110.02861 : des états 8 bits gardent les performances de l'optimiseur 32 bits",
        EN: "Dettmers et al. 2022, 8-bit Optimizers via Block-wise Quantization, "
        "arXiv:2110.02861: 8-bit states maintain 32-bit optimizer performance",
    },
    "web_fit.source.micro_batch": {
        FR: "l'accumulation de gradients somme les mêmes gradients sur les micro-lots (même lot "
        "global) ; de plus petits micro-lots occupent moins bien le GPU",
        EN: "gradient accumulation sums the same gradients over micro-batches (same global "
        "batch); smaller micro-batches use the GPU less efficiently",
    },
    "web_fit.source.sharding": {
        FR: "Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054, section 7 : P_os et P_os+g "
        "échangent le même volume que le parallélisme de données, P_os+g+p 1,5 fois plus",
        EN: "Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054, section 7: P_os and P_os+g move "
        "the same volume as data parallelism, P_os+g+p 1.5 times it",
    },
    "web_fit.source.offload_optimizer": {
        FR: "Ren et al. 2021, ZeRO-Offload, arXiv:2101.06840 : le pas de l'optimiseur tourne sur "
        "le CPU, gradients et paramètres traversent le PCIe à chaque pas",
        EN: "Ren et al. 2021, ZeRO-Offload, arXiv:2101.06840: the optimizer step runs on the "
        "CPU, gradients and parameters cross PCIe every step",
    },
    "web_fit.source.offload_params": {
        FR: "Rajbhandari et al. 2021, ZeRO-Infinity, arXiv:2104.07857 : les paramètres "
        "traversent le PCIe à chaque passe avant et arrière",
        EN: "Rajbhandari et al. 2021, ZeRO-Infinity, arXiv:2104.07857: parameters fetched over "
        "PCIe for every forward and backward",
    },
    "web_fit.source.lora": {
        FR: "Hu et al. 2021, LoRA, arXiv:2106.09685 (à égalité sur GLUE, E2E) ; Biderman et al. "
        "2024, LoRA Learns Less and Forgets Less, arXiv:2405.09673 (en dessous de l'affinage "
        "complet en code et en mathématiques)",
        EN: "Hu et al. 2021, LoRA, arXiv:2106.09685 (on par on GLUE, E2E); Biderman et al. 2024, "
        "LoRA Learns Less and Forgets Less, arXiv:2405.09673 (below full fine-tuning on code, "
        "math)",
    },
    "web_fit.source.qlora": {
        FR: "Dettmers et al. 2023, QLoRA, arXiv:2305.14314 : NF4 à double quantification égale "
        "LoRA en 16 bits ; les poids sont déquantifiés à chaque usage",
        EN: "Dettmers et al. 2023, QLoRA, arXiv:2305.14314: NF4 with double quantization matches "
        "16-bit LoRA; weights are dequantized at every use",
    },
    "web_fit.source.shorter_sequence": {
        FR: "la troncature supprime chaque jeton au-delà de la limite : le modèle ne voit plus "
        "de longs contextes",
        EN: "truncation drops every token past the limit: the model no longer sees long "
        "contexts",
    },
    "web_fit.source.shorter_completion": {
        FR: "les complétions s'arrêtent à la limite (max_completion_length de TRL) : un long "
        "raisonnement est coupé et récompensé tel quel",
        EN: "completions stop at the limit (TRL max_completion_length): long reasoning is cut "
        "and rewarded as it stands",
    },
    "web_fit.source.precompute_ref": {
        FR: "precompute_ref_log_probs de TRL : la référence gelée donne les mêmes "
        "log-probabilités, calculées une fois avant l'entraînement, sans mémoire pendant",
        EN: "TRL precompute_ref_log_probs: the frozen reference gives the same "
        "log-probabilities computed once before training, and needs no memory during it",
    },
    "web_fit.source.vllm_sleep": {
        FR: "vllm_enable_sleep_mode de TRL : vLLM libère poids et cache KV après chaque "
        "génération et les recharge pour la suivante",
        EN: "TRL vllm_enable_sleep_mode: vLLM frees its weights and KV cache after each "
        "generation and reloads them for the next",
    },
    "web_fit.source.vllm_share": {
        FR: "gpu_memory_utilization de vLLM : un cache KV plus petit génère moins de séquences "
        "à la fois (mêmes complétions, en plus de vagues)",
        EN: "vLLM gpu_memory_utilization: a smaller KV cache pool runs fewer sequences at once "
        "(same completions, in more waves)",
    },
}
